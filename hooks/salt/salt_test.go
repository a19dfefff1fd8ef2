package salt_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/salt"
)

func TestMain(m *testing.M) { hooktest.Main(m, salt.Hook) }

type fixture struct {
	working, minion, bin, state, tool string
}

// setup is the reference test's: a working directory, and a minion
// configuration naming its own cache directory.
func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), minion: filepath.Join(t.TempDir(), "minion"), bin: t.TempDir()}
	f.state = filepath.Join(t.TempDir(), "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "salt-call")
	conf := "cachedir: " + t.TempDir() + "\nlog_level: DEBUG\n"
	if err := os.WriteFile(f.minion, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_SALT_WORKING=" + f.working, "SALT_MINION_CONFIG=" + f.minion,
	}, vars...)...)
}

func (f *fixture) outFile() string { return filepath.Join(f.working, "fake_stack.out.json") }

// answer is salt-call's JSON answer from testdata/, and its status.
func (f *fixture) answer(t *testing.T, name string, status int) hooktest.Response {
	return hooktest.Response{Returncode: status, Files: map[string]string{f.outFile(): hooktest.ReadFile(t, filepath.Join("testdata", name))}}
}

// The reference test's states.
const (
	slsok = `
testit:
  environ.setenv:
  - name: does_not_matter
  - value:
      foo: {{ opts['fooval'] }}
      bar: {{ opts['barval'] }}
`
	slsfail = `
failure:
  test.echo:
  - text: I don't work
`
	slsnotallowed = `
default to accept:
  iptables.set_policy:
    - chain: INPUT
    - policy: REJECT
`
)

func data(config string) string {
	c := `null`
	if config != "" {
		c = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(config, `\`, `\\`), `"`, `\"`), "\n", `\n`)
		c = `"` + c + `"`
	}
	return `{"id": "fake_stack", "name": "fake_resource_name", "group": "salt",
	"inputs": [{"name": "fooval", "value": "bar"}, {"name": "barval", "value": "foo"}],
	"outputs": [{"name": "first_output"}, {"name": "second_output"}], "config": ` + c + `}`
}

// test_hook_salt.py: test_hook (a state that sets environment values from
// the inputs), test_hook_salt_failed (a state function that does not
// exist: status 2, "was not found in SLS" in deploy_stderr, no stdout) and
// test_hook_salt_retcode (a state refused by the system: its result false
// in deploy_stderr). Each checks salt-call's argv and environment, the
// state and options files, and the result byte for byte.
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name, sls, answer string
		status            int
		golden            string
	}{
		{"test_hook", slsok, "answer-ok.json", 0, "ok.json"},
		{"test_hook_salt_failed", slsfail, "answer-fail.json", 2, "failed.json"},
		{"test_hook_salt_retcode", slsnotallowed, "answer-notallowed.json", 2, "notallowed.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := hooktest.Run(t, salt.Hook, data(tc.sls), f.environ(t, f.answer(t, tc.answer, tc.status)))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			hooktest.Golden(t, tc.golden, r.Stdout)
			st := hooktest.ReadState(t, f.state, 0)
			opts := filepath.Join(f.working, "fake_stack.opts")
			want := []string{"salt-call", "--local", "--config-dir", filepath.Dir(f.minion), "--file-root", f.working,
				"--retcode-passthrough", "--out", "json", "--out-file", f.outFile(), "state.sls", "fake_stack", "localconfig=" + opts}
			if !slices.Equal(st.Args, want) {
				t.Errorf("argv\n got %q\nwant %q", st.Args, want)
			}
			if st.Env["SALT_MINION_CONFIG"] != f.minion || st.Cwd != f.working {
				t.Errorf("SALT_MINION_CONFIG=%q cwd %s", st.Env["SALT_MINION_CONFIG"], st.Cwd)
			}
			sls := filepath.Join(f.working, "fake_stack.sls")
			if got := hooktest.ReadFile(t, sls); got != tc.sls || hooktest.Mode(t, sls) != 0o700 {
				t.Errorf("state file mode %o: %q", hooktest.Mode(t, sls), got)
			}
			if got := hooktest.ReadFile(t, opts); got != "barval: foo\nfooval: bar\n" || hooktest.Mode(t, opts) != 0o600 {
				t.Errorf("options file mode %o: %q", hooktest.Mode(t, opts), got)
			}
			res := r.JSON(t)
			switch tc.status {
			case 0:
				if res["deploy_stderr"] != nil || !strings.Contains(res["deploy_stdout"].(string), "changes:\n    bar: foo\n    foo: bar\n") {
					t.Errorf("result %s", r.Stdout)
				}
			default:
				if res["deploy_stdout"] != nil || !strings.Contains(res["deploy_stderr"].(string), "result: false") {
					t.Errorf("result %s", r.Stdout)
				}
			}
		})
	}
	f := setup(t)
	r := hooktest.Run(t, salt.Hook, data(slsfail), f.environ(t, f.answer(t, "answer-fail.json", 2)))
	if !strings.Contains(r.JSON(t)["deploy_stderr"].(string), "was not found in SLS") {
		t.Errorf("test_hook_salt_failed: %s", r.Stdout)
	}
}

// salt's status is not always right, as the reference says: a non-zero
// status with every state's result true is a success; a list of render
// errors (the reference crashed on it) is a failure with its status.
func TestStatusRules(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, salt.Hook, data(slsok), f.environ(t, f.answer(t, "answer-ok.json", 1)))
	if res := r.JSON(t); res["deploy_status_code"] != 0.0 || res["deploy_stdout"] == nil || res["deploy_stderr"] != nil {
		t.Errorf("status 1, states true: %s", r.Stdout)
	}
	f = setup(t)
	r = hooktest.Run(t, salt.Hook, data(slsok), f.environ(t, f.answer(t, "answer-render-error.json", 1)))
	hooktest.Golden(t, "render-error.json", r.Stdout)
}

// Without an answer (salt-call failed before the state ran, or is not
// installed) the result is salt-call's output and status; the reference
// crashed. A stale answer of an earlier run does not count.
func TestNoAnswer(t *testing.T) {
	f := setup(t)
	if err := os.WriteFile(f.outFile(), []byte(`{"local": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := hooktest.Run(t, salt.Hook, data(slsok), f.environ(t, hooktest.Response{Stderr: "Passed invalid arguments", Returncode: 1}))
	want := `{"first_output": null, "second_output": null, "deploy_stdout": "", "deploy_stderr": "Passed invalid arguments", "deploy_status_code": 1}`
	if r.Code != 0 || r.Stdout != want || !strings.Contains(r.Stderr, "[ERROR] Salt invocation error while applying Salt state fake_stack.sls\n") {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
	f = setup(t)
	r = hooktest.Run(t, salt.Hook, data(slsok), f.environ(t, nil, "HEAT_SALT_CMD=salt-call-missing"))
	if res := r.JSON(t); res["deploy_status_code"] != 127.0 || res["deploy_stderr"] != "salt-call-missing: command not found" {
		t.Errorf("not installed: %s", r.Stdout)
	}
	// One line says so, as it is: not "not installed yet", and no
	// invocation error (salt was never invoked).
	if want := "[ERROR] salt-call-missing is not installed: Salt state fake_stack.sls not applied\n"; !strings.Contains(r.Stderr, want) ||
		strings.Contains(r.Stderr, "yet") || strings.Contains(r.Stderr, "invocation") {
		t.Errorf("not installed: log\n%s\nwant the line %q", r.Stderr, want)
	}
}

// A structured config is written as YAML (the reference's safe_dump); a
// null one as an empty state. Outputs named after fields of salt's caller
// return get them.
func TestStructuredConfigAndOutputs(t *testing.T) {
	f := setup(t)
	d := `{"id": "fake_stack", "group": "salt", "inputs": [], "outputs": [{"name": "retcode"}, {"name": "return"}, {"name": "jid"}],
	"config": {"testit": {"environ.setenv": [{"name": "x"}, {"value": {"foo": "bar"}}]}}}`
	r := hooktest.Run(t, salt.Hook, d, f.environ(t, f.answer(t, "answer-ok.json", 0)))
	if got := hooktest.ReadFile(t, filepath.Join(f.working, "fake_stack.sls")); got != "testit:\n  environ.setenv:\n  - name: x\n  - value:\n      foo: bar\n" {
		t.Errorf("state file %q", got)
	}
	if got := hooktest.ReadFile(t, filepath.Join(f.working, "fake_stack.opts")); got != "{}\n" {
		t.Errorf("options file %q", got)
	}
	res := r.JSON(t)
	if res["retcode"] != 0.0 || res["jid"] != nil || res["return"].(map[string]any)["environ_|-testit_|-does_not_matter_|-setenv"] == nil {
		t.Errorf("outputs %s", r.Stdout)
	}
}

// Input values are minion options, and may be credentials: the log shows
// them hidden.
func TestResultsLineHidesCredentials(t *testing.T) {
	f := setup(t)
	d := strings.Replace(data(slsok), `{"name": "barval", "value": "foo"}`, `{"name": "deploy_password", "value": "hunter2-secret"}`, 1)
	ans := f.answer(t, "answer-ok.json", 0)
	ans.Files[f.outFile()] = strings.Replace(ans.Files[f.outFile()], `"bar": "foo"`, `"bar": "hunter2-secret"`, 1)
	r := hooktest.Run(t, salt.Hook, d, f.environ(t, ans))
	if strings.Contains(r.Stderr, "hunter2") || !strings.Contains(r.Stderr, "[INFO] Results: {'return': {") {
		t.Errorf("log %s", r.Stderr)
	}
}
