package hooks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

func TestMain(m *testing.M) { hooktest.Main(m, echoHook) }

// echoHook answers with the deployment's id and group, or fails when the
// config says so.
var echoHook = hooks.Hook{Group: "echo", Run: func(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	if d.ConfigString() == "fail" {
		return nil, errors.New("the hook could not work")
	}
	res := hooks.Status(nil, d.ID(), d.Group(), 0)
	res.Set("options", d.OptionString("x"))
	return res, nil
}}

// The result is printed as Python's json.dump prints it: ", " and ": ",
// non-ASCII escaped, the hook's key order, no newline after it.
func TestMainPrintsTheResultAsPythonDoes(t *testing.T) {
	r := hooktest.Run(t, echoHook, `{"id": "id-é", "group": "echo", "inputs": [], "options": null}`, nil)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	want := `{"deploy_stdout": "id-\u00e9", "deploy_stderr": "echo", "deploy_status_code": 0, "options": ""}`
	if r.Stdout != want {
		t.Errorf("stdout\n got %s\nwant %s", r.Stdout, want)
	}
}

// What is not a deployment makes one ERROR line in the reference's format
// and exit status 1, with nothing on stdout (heat-config then signals
// status 1 with that line).
func TestMainRefusesWhatIsNotADeployment(t *testing.T) {
	for _, tc := range []struct{ name, stdin, msg string }{
		{"empty", "", "invalid deployment on stdin: Expecting value: line 1 column 1 (char 0)"},
		{"not JSON", "{", "invalid deployment on stdin: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"},
		{"not UTF-8", "{\"id\": \"\xff\"}", "invalid deployment on stdin: 'utf-8' codec can't decode byte 0xff in position 8: invalid start byte"},
		{"a list", `[]`, "invalid deployment: not a JSON object but a list (on stdin)"},
		{"no id", `{"group": "echo"}`, "invalid deployment: no id (on stdin)"},
		{"unsafe id", `{"id": "../x", "group": "echo"}`, `invalid deployment: id "../x" holds a slash or NUL (on stdin)`},
		{"no group", `{"id": "1"}`, "invalid deployment: no group (on stdin)"},
		{"inputs not a list", `{"id": "1", "group": "echo", "inputs": {}}`, "invalid deployment: inputs is an object, not a list (on stdin)"},
		{"input without name", `{"id": "1", "group": "echo", "inputs": [{}]}`, "invalid deployment: input 0 has no name (on stdin)"},
		{"too deep", strings.Repeat("[", 20000), "invalid deployment on stdin:"},
		{"the hook fails", `{"id": "1", "group": "echo", "config": "fail"}`, "the hook could not work"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hooktest.Run(t, echoHook, tc.stdin, nil)
			if r.Code != 1 || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", r.Code, r.Stdout)
			}
			lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "(heat-config) [ERROR] "+tc.msg) {
				t.Errorf("stderr %q, want one ERROR line with %q", r.Stderr, tc.msg)
			}
		})
	}
}

// A deployment without inputs is one with none: heat-config always sends
// them, but the hooks that ignore inputs were tested upstream without.
func TestMainTakesMissingInputsAsNone(t *testing.T) {
	r := hooktest.Run(t, echoHook, `{"id": "1", "group": "echo", "config": {"a": 1}}`, nil)
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, `{"deploy_stdout": "1"`) {
		t.Errorf("exit %d, stdout %q, stderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

// A hook whose reference never reads the id (IDOptional) runs a
// deployment without one, as heat-agents' tests of cfn-init and
// docker-compose feed them; an id present is still checked, and a hook
// that needs the id still refuses (the "no id" row above).
func TestMainIDOptional(t *testing.T) {
	h := echoHook
	h.IDOptional = true
	r := hooktest.Run(t, h, `{"group": "echo", "inputs": [], "config": {"foo": "bar"}}`, nil)
	if want := `{"deploy_stdout": "", "deploy_stderr": "echo", "deploy_status_code": 0, "options": ""}`; r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d, stdout %q, stderr %s; want 0 and %s", r.Code, r.Stdout, r.Stderr, want)
	}
	r = hooktest.Run(t, h, `{"id": "../x", "group": "echo"}`, nil)
	if r.Code != 1 || !strings.Contains(r.Stderr, `invalid deployment: id "../x" holds a slash or NUL (on stdin)`) {
		t.Errorf("unsafe id: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// Null options are no options (the reference crashed on them).
func TestNullOptionsAreEmpty(t *testing.T) {
	for _, opts := range []string{`null`, `{}`, `{"x": null}`} {
		r := hooktest.Run(t, echoHook, `{"id": "1", "group": "echo", "inputs": [], "options": `+opts+`}`, nil)
		if r.Code != 0 || r.JSON(t)["options"] != "" {
			t.Errorf("options %s: exit %d, stdout %q", opts, r.Code, r.Stdout)
		}
	}
}

// A hook stopped from outside still prints its result, then reports
// that it was terminated.
func TestMainStoppedReportsTerminated(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	err := hooks.Main(ctx, echoHook, nil, hooks.Env{Stdin: strings.NewReader(`{"id": "1", "group": "echo", "inputs": []}`), Stdout: &out, Stderr: &strings.Builder{}})
	if err == nil || out.Len() == 0 {
		t.Errorf("err %v, stdout %q", err, out.String())
	}
}

func TestEnvValue(t *testing.T) {
	obj := jsondoc.NewObject(1)
	obj.Set("k", []jsondoc.Value{jsondoc.Int(1), "x"})
	for _, tc := range []struct {
		v    jsondoc.Value
		want string
	}{
		{"as is", "as is"},
		{"", ""},
		{nil, ""},
		{jsondoc.Int(1), "1"},
		{jsondoc.Float(1.5), "1.5"},
		{true, "true"},
		{false, "false"},
		{[]jsondoc.Value{"v1", jsondoc.Int(12)}, `["v1", 12]`},
		{obj, `{"k": [1, "x"]}`},
	} {
		if got := hooks.EnvValue(tc.v); got != tc.want {
			t.Errorf("EnvValue(%s) = %q, want %q", jsondoc.Dumps(tc.v), got, tc.want)
		}
	}
}

func TestLogValueHidesCredentials(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"foo", "bar", "bar"},
		{"deploy_password", "s3cret", "***"},
		{"FACTER_deploy_password", "s3cret", "***"},
		{"AdminToken", "t0ken", "***"},
		{"deploy_signal_id", "http://heat:8000/v1/signal/x?Signature=abc&Timestamp=1", "http://heat:8000/v1/signal/x"},
		{"FACTER_deploy_signal_id", "https://swift/v1/AUTH_p/c/o?temp_url_sig=abc", "https://swift/v1/AUTH_p/c/o"},
	} {
		if got := hooks.LogValue(tc.name, tc.value); got != tc.want {
			t.Errorf("LogValue(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSettingAndTimeout(t *testing.T) {
	env := hooks.Env{Environ: []string{"A=x", "EMPTY=", hooks.TimeoutVar + "=0.5"}}
	if env.Setting("A", "d") != "x" || env.Setting("EMPTY", "d") != "d" || env.Setting("UNSET", "d") != "d" {
		t.Error("Setting: a set value wins, an empty or unset one gives the default")
	}
	for _, tc := range []struct {
		value string
		want  string
	}{
		{"", "4h0m0s"},
		{"0.5", "500ms"},
		{"30", "30s"},
		{"0", "4h0m0s"},
		{"-1", "4h0m0s"},
		{"soon", "4h0m0s"},
		{"NaN", "4h0m0s"},
		{"1e300", "4h0m0s"},
	} {
		var log strings.Builder
		env := hooks.Env{Environ: []string{hooks.TimeoutVar + "=" + tc.value}}
		env.Log = hooktest.Logger(&log)
		got, err := env.Timeout()
		if got.String() != tc.want {
			t.Errorf("%s=%q: %s, want %s", hooks.TimeoutVar, tc.value, got, tc.want)
		}
		// A bad value is refused, as 55-heat-config refuses it (exit 1):
		// the error names the variable and its value.
		if bad := tc.want == "4h0m0s" && tc.value != ""; bad != (err != nil) || bad && !strings.Contains(err.Error(), hooks.TimeoutVar+`="`+tc.value+`"`) {
			t.Errorf("%q: error %v", tc.value, err)
		}
	}
}
