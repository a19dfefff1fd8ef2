package script_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/script"
)

func TestMain(m *testing.M) { hooktest.Main(m, script.Hook) }

// fakeConfig is a config that hands its call to the recording fake tool,
// keeping its own path as argv[0] (the reference's test used the fake
// tool's source as the config).
const fakeConfig = "#!/bin/bash\nexec -a \"$0\" \"$HOOKTEST_FAKE\" \"$@\"\n"

type fixture struct {
	working, outputs, bin, state, fake string
}

func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), outputs: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(f.outputs, "test_state.json")
	f.fake = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_SCRIPT_WORKING=" + f.working, "HEAT_SCRIPT_OUTPUTS=" + f.outputs, "HOOKTEST_FAKE=" + f.fake,
	}, vars...)...)
}

// deployment is the reference test's data, with config as given.
func deployment(config string) string {
	c, _ := json.Marshal(config)
	return `{"id": "1234", "group": "script", "inputs": [
		{"name": "foo", "value": "bar"},
		{"name": "another", "value": "input"},
		{"name": "a_dict", "value": "{\"key\": \"value\"}"},
		{"name": "a_list", "value": "[\"v1\", 12]"}],
	"outputs": [{"name": "first_output"}, {"name": "second_output"}],
	"config": ` + string(c) + `}`
}

// test_hook_script.py::test_hook: the config is written to <working>/<id>
// and executed with no arguments, the inputs (JSON text stays text) and
// heat_outputs_path in its environment, in the working dir; declared
// outputs come from <outputs>/<id>.<name>, before the deploy_ keys.
func TestHook(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, script.Hook, deployment(fakeConfig), f.environ(t, hooktest.Response{
		Stdout: "script success", Stderr: "thing happened",
		Files: map[string]string{
			filepath.Join(f.outputs, "1234.first_output"):  "output 1",
			filepath.Join(f.outputs, "1234.second_output"): "output 2",
		},
	}))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	hooktest.Golden(t, "hook.json", r.Stdout)

	fn := filepath.Join(f.working, "1234")
	if got := hooktest.ReadFile(t, fn); got != fakeConfig {
		t.Errorf("script file %q", got)
	}
	if m := hooktest.Mode(t, fn); m != 0o700 {
		t.Errorf("script file mode %o", m)
	}
	st := hooktest.ReadState(t, f.state, 0)
	if len(st.Args) != 1 || st.Args[0] != fn {
		t.Errorf("args %q, want [%s]", st.Args, fn)
	}
	for name, want := range map[string]string{
		"foo": "bar", "another": "input", "a_dict": `{"key": "value"}`, "a_list": `["v1", 12]`,
		"heat_outputs_path": filepath.Join(f.outputs, "1234"),
	} {
		if got := st.Env[name]; got != want {
			t.Errorf("env %s=%q, want %q", name, got, want)
		}
	}
	if st.Cwd != f.working || st.Stdin != "" {
		t.Errorf("cwd %q, stdin %q", st.Cwd, st.Stdin)
	}
}

// test_hook_script.py::test_hook_failed: the script's status is the
// deployment's; the hook itself exits 0.
func TestHookFailed(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, script.Hook, deployment(fakeConfig), f.environ(t, hooktest.Response{
		Stdout: "script failed", Stderr: "bad thing happened", Returncode: 1,
	}))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	want := `{"deploy_stdout": "script failed", "deploy_stderr": "bad thing happened", "deploy_status_code": 1}`
	if r.Stdout != want {
		t.Errorf("stdout\n got %s\nwant %s", r.Stdout, want)
	}
	if !strings.Contains(r.Stderr, "[ERROR] Error running "+filepath.Join(f.working, "1234")+". [1]\n\n") {
		t.Errorf("log:\n%s", r.Stderr)
	}
}

// Decision: every input becomes a variable; a value that is not a string
// is its JSON text (the reference crashed on numbers and booleans), and
// null or no value is empty.
func TestInputValuesAsEnvironment(t *testing.T) {
	f := setup(t)
	d := `{"id": "1", "group": "script", "config": ` + jsonString(fakeConfig) + `, "inputs": [
		{"name": "s", "value": "text"},
		{"name": "n", "type": "Number", "value": 1},
		{"name": "fl", "type": "Number", "value": 2.50},
		{"name": "b", "type": "Boolean", "value": true},
		{"name": "l", "type": "CommaDelimitedList", "value": ["a", 1]},
		{"name": "j", "type": "Json", "value": {"k": "é"}},
		{"name": "null", "value": null},
		{"name": "missing"},
		{"name": "twice", "value": "first"},
		{"name": "twice", "value": "second"}]}`
	r := hooktest.Run(t, script.Hook, d, f.environ(t, nil))
	if r.Code != 0 || r.JSON(t)["deploy_status_code"] != 0.0 {
		t.Fatalf("exit %d: %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	st := hooktest.ReadState(t, f.state, 0)
	for name, want := range map[string]string{
		"s": "text", "n": "1", "fl": "2.5", "b": "true", "l": `["a", 1]`, "j": `{"k": "\u00e9"}`,
		"null": "", "missing": "", "twice": "second",
	} {
		if got, ok := st.Env[name]; !ok || got != want {
			t.Errorf("env %s=%q (set %v), want %q", name, got, ok, want)
		}
	}
}

// Decision: inputs are logged NAME=value as by the reference, except that
// credentials show as *** and signal URLs without their query; a tool
// echoing a credential is redacted in the log too (not in the result).
func TestInputsLoggedWithoutSecrets(t *testing.T) {
	f := setup(t)
	config := "#!/bin/sh\necho \"pw=$deploy_password\"\n"
	d := `{"id": "1", "group": "script", "config": ` + jsonString(config) + `, "inputs": [
		{"name": "foo", "value": "bar"},
		{"name": "deploy_password", "value": "hunter2-secret"},
		{"name": "deploy_signal_id", "value": "http://heat:8000/v1/signal/arn?Signature=SIGNED&AWSAccessKeyId=KEY"}]}`
	r := hooktest.Run(t, script.Hook, d, f.environ(t, nil))
	for _, want := range []string{
		"[INFO] foo=bar\n",
		"[INFO] deploy_password=***\n",
		"[INFO] deploy_signal_id=http://heat:8000/v1/signal/arn\n",
		"[INFO] b'pw=***\\n'\n",
	} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("log lacks %q:\n%s", want, r.Stderr)
		}
	}
	for _, secret := range []string{"hunter2-secret", "SIGNED", "KEY"} {
		if strings.Contains(r.Stderr, secret) {
			t.Errorf("log shows %q:\n%s", secret, r.Stderr)
		}
	}
	if r.JSON(t)["deploy_stdout"] != "pw=hunter2-secret\n" {
		t.Errorf("result %s", r.Stdout)
	}
}

// A script from an earlier run of the id is replaced whole, and gets
// 0700 whatever its mode was (the reference neither truncated nor set
// the mode of an existing file).
func TestScriptFileRewritten(t *testing.T) {
	f := setup(t)
	fn := filepath.Join(f.working, "1")
	if err := os.WriteFile(fn, []byte("#!/bin/sh\necho a much longer old script that must not survive\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	config := "#!/bin/sh\necho new\n"
	r := hooktest.Run(t, script.Hook, `{"id": "1", "group": "script", "inputs": [], "config": `+jsonString(config)+`}`, f.environ(t, nil))
	if got := hooktest.ReadFile(t, fn); got != config || hooktest.Mode(t, fn) != 0o700 {
		t.Errorf("script %q mode %o", got, hooktest.Mode(t, fn))
	}
	if r.JSON(t)["deploy_stdout"] != "new\n" {
		t.Errorf("result %s", r.Stdout)
	}
}

// The directories are created 0700; a config without a #! line is a
// failed deployment (126, the exec error) instead of a hook crash; a
// null config is an empty script.
func TestDirectoriesAndUnrunnableConfigs(t *testing.T) {
	f := setup(t)
	working, outputs := filepath.Join(f.working, "new", "w"), filepath.Join(f.outputs, "new", "o")
	env := f.environ(t, nil, "HEAT_SCRIPT_WORKING="+working, "HEAT_SCRIPT_OUTPUTS="+outputs)
	r := hooktest.Run(t, script.Hook, `{"id": "1", "group": "script", "inputs": [], "config": "echo no shebang"}`, env)
	fn := filepath.Join(working, "1")
	want := `{"deploy_stdout": "", "deploy_stderr": "[Errno 8] Exec format error: '` + fn + `'", "deploy_status_code": 126}`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d\n got %s\nwant %s", r.Code, r.Stdout, want)
	}
	for _, dir := range []string{working, outputs} {
		if m := hooktest.Mode(t, dir); m != 0o700 {
			t.Errorf("%s: mode %o", dir, m)
		}
	}
	r = hooktest.Run(t, script.Hook, `{"id": "2", "group": "script", "inputs": [], "config": null}`, env)
	if got := hooktest.ReadFile(t, filepath.Join(working, "2")); got != "" || r.JSON(t)["deploy_status_code"] != 126.0 {
		t.Errorf("null config: file %q, result %s", got, r.Stdout)
	}
}

// An input that cannot be an environment variable fails the hook with a
// message (the reference crashed).
func TestInputThatCannotBeAVariable(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, script.Hook, `{"id": "1", "group": "script", "config": "", "inputs": [{"name": "a=b", "value": "x"}]}`, f.environ(t, nil))
	if r.Code != 1 || !strings.Contains(r.Stderr, `[ERROR] input "a=b" cannot be an environment variable`) {
		t.Errorf("exit %d, log %s", r.Code, r.Stderr)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
