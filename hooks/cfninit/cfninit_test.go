package cfninit_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/cfninit"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, cfninit.Hook) }

type fixture struct {
	metadata, bin, state, tool string
}

// setup is the reference test's setUp: the metadata directory (which
// also holds the fake's state) and the fake tool as HEAT_CFN_INIT_CMD.
func setup(t *testing.T) *fixture {
	f := &fixture{metadata: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(f.metadata, "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		cfninit.MetadataDirVar + "=" + f.metadata, cfninit.CmdVar + "=" + f.tool,
	}, vars...)...)
}

// data is the reference test's deployment as it is, without an id: the
// reference's cfn-init hook never reads one (Hook.IDOptional).
const data = `{"group": "cfn-init", "inputs": [], "config": {"foo": "bar"}}`

// test_hook_cfn_init.py, one row each: the result, last_metadata holding
// the config under AWS::CloudFormation::Init, cfn-init called without
// arguments. The hook exits 0 whether cfn-init succeeded or not.
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp hooktest.Response
		want string
	}{
		{"test_hook", hooktest.Response{Stdout: "cfn-init success", Stderr: "thing happened"},
			`{"deploy_stdout": "cfn-init success", "deploy_stderr": "thing happened", "deploy_status_code": 0}`},
		{"test_hook_cfn_init_failed", hooktest.Response{Stderr: "bad thing happened", Returncode: 1},
			`{"deploy_stdout": "", "deploy_stderr": "bad thing happened", "deploy_status_code": 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := hooktest.Run(t, cfninit.Hook, data, f.environ(t, tc.resp))
			if r.Code != 0 || r.Stdout != tc.want {
				t.Fatalf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, tc.want, r.Stderr)
			}
			if got := hooktest.ReadFile(t, filepath.Join(f.metadata, "last_metadata")); got != `{"AWS::CloudFormation::Init": {"foo": "bar"}}` {
				t.Errorf("last_metadata %s", got)
			}
			if st := hooktest.ReadState(t, f.state, 0); !slices.Equal(st.Args, []string{f.tool}) {
				t.Errorf("argv %q, want the command alone", st.Args)
			}
		})
	}
}

// test_hook_invalid_json: stdin that is not JSON is exit 1 (one ERROR
// line), and cfn-init is not run.
func TestHookInvalidJSON(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, cfninit.Hook, "{::::", f.environ(t, nil))
	if r.Code != 1 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "[ERROR] invalid deployment") {
		t.Errorf("exit %d, stdout %q, log %q", r.Code, r.Stdout, r.Stderr)
	}
	if n := hooktest.Calls(f.state); n != 0 {
		t.Errorf("cfn-init ran %d times", n)
	}
}

// The config's shapes: an object as it is; a string is parsed as JSON (a
// SoftwareConfig's text); absent or null is {} (the reference crashed on
// null); a string that is not JSON, a list or a number is one ERROR line,
// exit 1, cfn-init not run, and the config is not quoted in the log.
func TestConfigShapes(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		metadata     string // "" when the hook must refuse
		log          string
	}{
		{"object", `{"config": {"files": {}}}`, `{"AWS::CloudFormation::Init": {"config": {"files": {}}}}`, ""},
		{"json string", `"{\"config\": {\"commands\": {\"a\": {\"command\": \"true\"}}}}"`,
			`{"AWS::CloudFormation::Init": {"config": {"commands": {"a": {"command": "true"}}}}}`, ""},
		{"null", `null`, `{"AWS::CloudFormation::Init": {}}`, ""},
		{"not json", `"password: hunter2"`, "", "[ERROR] unusable config: the cfn-init hook's config is a string that is not JSON: Expecting value: line 1 column 1 (char 0)\n"},
		{"list", `["hunter2"]`, "", "[ERROR] unusable config: the cfn-init hook's config is a list, not an object or a JSON string\n"},
		{"number", `3`, "", "[ERROR] unusable config: the cfn-init hook's config is a number, not an object or a JSON string\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := hooktest.Run(t, cfninit.Hook, `{"id": "1", "group": "cfn-init", "inputs": [], "config": `+tc.config+`}`, f.environ(t, nil))
			if tc.metadata == "" {
				if r.Code != 1 || r.Stdout != "" || !strings.HasSuffix(r.Stderr, tc.log) || strings.Contains(r.Stderr, "hunter2") || hooktest.Calls(f.state) != 0 {
					t.Errorf("exit %d, stdout %q, log %q", r.Code, r.Stdout, r.Stderr)
				}
				return
			}
			if r.Code != 0 || r.JSON(t)["deploy_status_code"] != 0.0 {
				t.Fatalf("exit %d, %s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if got := hooktest.ReadFile(t, filepath.Join(f.metadata, "last_metadata")); got != tc.metadata {
				t.Errorf("last_metadata\n got %s\nwant %s", got, tc.metadata)
			}
		})
	}
	// No config key at all: {} as in the reference.
	f := setup(t)
	if r := hooktest.Run(t, cfninit.Hook, `{"id": "1", "group": "cfn-init", "inputs": []}`, f.environ(t, nil)); r.Code != 0 ||
		hooktest.ReadFile(t, filepath.Join(f.metadata, "last_metadata")) != `{"AWS::CloudFormation::Init": {}}` {
		t.Errorf("no config: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A missing metadata directory is created 0700 (parents as needed);
// last_metadata is truncated on every run and left 0600 whatever it was.
func TestMetadataFile(t *testing.T) {
	f := setup(t)
	dir := filepath.Join(t.TempDir(), "cache", "heat-cfntools")
	env := f.environ(t, nil, cfninit.MetadataDirVar+"="+dir)
	hooktest.Run(t, cfninit.Hook, `{"id": "1", "group": "cfn-init", "inputs": [], "config": {"a": "`+strings.Repeat("x", 100)+`"}}`, env)
	r := hooktest.Run(t, cfninit.Hook, data, env)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	file := filepath.Join(dir, "last_metadata")
	if got := hooktest.ReadFile(t, file); got != `{"AWS::CloudFormation::Init": {"foo": "bar"}}` {
		t.Errorf("last_metadata %q", got)
	}
	if m := hooktest.Mode(t, dir); m != 0o700 {
		t.Errorf("directory mode %o", m)
	}
	if m := hooktest.Mode(t, file); m != 0o600 {
		t.Errorf("last_metadata mode %o", m)
	}
}

// The default command is cfn-init, found in the PATH; the log lines are
// the reference's: Running, the output as Python bytes, Completed or
// Error running.
func TestDefaultCommandAndLog(t *testing.T) {
	f := setup(t)
	hooktest.Tool(t, f.bin, "cfn-init")
	r := hooktest.Run(t, cfninit.Hook, data, f.environ(t, hooktest.Response{Stdout: "out\n", Stderr: "err"}, cfninit.CmdVar+"="))
	if st := hooktest.ReadState(t, f.state, 0); !slices.Equal(st.Args, []string{"cfn-init"}) {
		t.Errorf("argv %q", st.Args)
	}
	for _, line := range []string{"[DEBUG] Running cfn-init\n", `[INFO] b'out\n'` + "\n", "[INFO] b'err'\n", "[INFO] Completed cfn-init\n"} {
		if !strings.Contains(r.Stderr, line) {
			t.Errorf("log lacks %q:\n%s", line, r.Stderr)
		}
	}
	r = hooktest.Run(t, cfninit.Hook, data, f.environ(t, hooktest.Response{Returncode: 3}, cfninit.CmdVar+"="))
	if !strings.Contains(r.Stderr, "[ERROR] Error running cfn-init. [3]\n\n") || strings.Contains(r.Stderr, "b''") {
		t.Errorf("log:\n%s", r.Stderr)
	}
}

// Decision: cfn-init not installed is a failed deployment (127, saying
// so), where the reference crashed without a result.
func TestCfnInitNotInstalled(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, cfninit.Hook, data, f.environ(t, nil, cfninit.CmdVar+"=cfn-init", "PATH="+f.bin))
	want := `{"deploy_stdout": "", "deploy_stderr": "cfn-init: command not found", "deploy_status_code": 127}`
	if r.Code != 0 || r.Stdout != want || !strings.Contains(r.Stderr, "[WARNING] cfn-init: command not found\n") {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// Past HEAT_CONFIG_HOOK_TIMEOUT cfn-init is stopped: 124, with the note.
func TestTimeout(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, cfninit.Hook, data, f.environ(t, hooktest.Response{Sleep: 30}, hooks.TimeoutVar+"=0.3"))
	res := r.JSON(t)
	if res["deploy_status_code"] != 124.0 || res["deploy_stderr"] != f.tool+" timed out after 0.3 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped" {
		t.Errorf("result %s", r.Stdout)
	}
}
