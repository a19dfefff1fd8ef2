package chef_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/chef"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, chef.Hook) }

type fixture struct {
	working, outputs, bin, state, chef, git string
}

func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), outputs: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(t.TempDir(), "test_state.json")
	f.chef = hooktest.Tool(t, f.bin, "chef-client")
	f.git = hooktest.Tool(t, f.bin, "git")
	hooktest.Tool(t, f.bin, "hostname")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_CHEF_WORKING=" + f.working, "HEAT_CHEF_OUTPUTS=" + f.outputs,
	}, vars...)...)
}

// run runs the hook with `hostname -f` played by the fake too, so its
// call is recorded in order as the reference's mocked Popen records it.
func (f *fixture) run(t *testing.T, stdin string, resp any, vars ...string) hooktest.Result {
	t.Helper()
	return hooktest.RunEnv(t, chef.Hook, hooks.Env{Stdin: strings.NewReader(stdin), Environ: f.environ(t, resp, vars...)})
}

// data is the reference test's deployment, with these options and extra
// inputs, and the config '["recipe[apache]"]'.
func data(options string, extra ...string) string {
	inputs := []string{
		`{"name": "fooval", "value": {"bar": "baz"}}`, `{"name": "barval", "value": {"foo": "biff"}}`,
		`{"name": "deploy_server_id", "value": "foo"}`, `{"name": "deploy_action", "value": "foo"}`,
		`{"name": "deploy_stack_id", "value": "foo"}`, `{"name": "deploy_resource_name", "value": "foo"}`,
		`{"name": "deploy_signal_transport", "value": "foo"}`, `{"name": "deploy_signal_id", "value": "foo"}`,
		`{"name": "deploy_signal_verb", "value": "foo"}`,
	}
	return `{"id": "fake_stack", "name": "fake_resource_name", "group": "chef",
	"inputs": [` + strings.Join(append(inputs, extra...), ", ") + `],
	"options": ` + options + `, "outputs": [{"name": "first_output"}, {"name": "second_output"}],
	"config": "[\"recipe[apache]\"]"}`
}

// The mocked Popen of the reference answered every call with
// (b"out", b"err") and status 0: hostname -f is "out".
var outErr = hooktest.Response{Stdout: "out", Stderr: "err"}

// test_hook_chef.py: test_hook, test_hook_with_kitchen and
// test_hook_environment: the calls in order, client.rb byte for byte, the
// node file, the result.
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name, options, extra string
		kitchen              bool
		env                  string // the client.rb line it adds
	}{
		{name: "test_hook", options: `{}`},
		{name: "test_hook_with_kitchen", options: `{"kitchen": "https://github.com/fake.git", "kitchen_path": "KITCHEN"}`, kitchen: true},
		{name: "test_hook_environment", options: `{}`, extra: `{"name": "environment", "value": "production"}`, env: "environment 'production'\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			kitchen := filepath.Join(f.working, "kitchen")
			if tc.kitchen {
				kitchen = filepath.Join(t.TempDir(), "opt/heat/chef/kitchen")
			}
			var extra []string
			if tc.extra != "" {
				extra = append(extra, tc.extra)
			}
			resps := []hooktest.Response{outErr, outErr}
			if tc.kitchen {
				resps = append(resps, outErr)
			}
			r := f.run(t, data(strings.ReplaceAll(tc.options, "KITCHEN", kitchen), extra...), resps)
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			if want := `{"deploy_status_code": 0, "deploy_stdout": "out", "deploy_stderr": "err"}`; r.Stdout != want {
				t.Errorf("result\n got %s\nwant %s", r.Stdout, want)
			}
			node := filepath.Join(f.working, "node", "out.json")
			client := filepath.Join(f.working, "client.rb")
			var calls [][]string
			for i := range hooktest.Calls(f.state) {
				calls = append(calls, hooktest.ReadState(t, f.state, i).Args)
			}
			want := [][]string{{"hostname", "-f"}, {f.chef, "-z", "--config", client, "-j", node}}
			if tc.kitchen {
				want = append([][]string{{f.git, "clone", "https://github.com/fake.git", kitchen}}, want...)
			}
			for i := range want {
				want[i][0] = filepath.Base(want[i][0])
			}
			for i := range calls {
				calls[i][0] = filepath.Base(calls[i][0])
			}
			if !slices.EqualFunc(calls, want, slices.Equal) {
				t.Errorf("calls\n got %q\nwant %q", calls, want)
			}
			wantCfg := "log_level :debug\nlog_location STDOUT\nlocal_mode true\nchef_zero.enabled true\n" +
				"cookbook_path '" + kitchen + "/cookbooks'\nrole_path '" + kitchen + "/roles'\n" +
				"environment_path '" + kitchen + "/environments'\n" + tc.env +
				"node_path '" + filepath.Join(f.working, "node") + "'"
			if got := hooktest.ReadFile(t, client); got != wantCfg || hooktest.Mode(t, client) != 0o600 {
				t.Errorf("client.rb mode %o\n got %q\nwant %q", hooktest.Mode(t, client), got, wantCfg)
			}
			hooktest.Golden(t, "node.json", hooktest.ReadFile(t, node))
			if hooktest.Mode(t, node) != 0o600 {
				t.Errorf("node file mode %o", hooktest.Mode(t, node))
			}
			st := hooktest.ReadState(t, f.state, hooktest.Calls(f.state)-1)
			if st.Env["heat_outputs_path"] != filepath.Join(f.outputs, "fake_stack") || st.Cwd != f.working {
				t.Errorf("chef-client: heat_outputs_path %q, cwd %s", st.Env["heat_outputs_path"], st.Cwd)
			}
		})
	}
}

// Outputs are read from $heat_outputs_path.<name>, after the reference's
// three keys; a failed chef-client run's status is the deployment's.
func TestOutputsAndFailure(t *testing.T) {
	f := setup(t)
	r := f.run(t, data(`{}`), []hooktest.Response{{Stdout: "node.example.com\n"}, {Stdout: "ran", Stderr: "boom", Returncode: 3, Files: map[string]string{
		filepath.Join(f.outputs, "fake_stack.first_output"): "one",
	}}})
	want := `{"deploy_status_code": 3, "deploy_stdout": "ran", "deploy_stderr": "boom", "first_output": "one"}`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d\n got %s\nwant %s", r.Code, r.Stdout, want)
	}
	if !strings.Contains(r.Stderr, "[ERROR] Chef return code 3:\nb'boom'\n") {
		t.Errorf("log %s", r.Stderr)
	}
	hooktest.ReadFile(t, filepath.Join(f.working, "node", "node.example.com.json"))
}

// A failed clone is the result, and chef-client does not run. On UPDATE
// the old kitchen is removed first, for a fresh clone.
func TestKitchenCloneFails(t *testing.T) {
	f := setup(t)
	kitchen := filepath.Join(f.working, "kitchen")
	if err := os.MkdirAll(kitchen, 0o700); err != nil || os.WriteFile(filepath.Join(kitchen, "old"), nil, 0o600) != nil {
		t.Fatal(err)
	}
	r := f.run(t, strings.Replace(data(`{"kitchen": "https://user:pw@example.com/k.git"}`), `"deploy_action", "value": "foo"`, `"deploy_action", "value": "UPDATE"`, 1),
		hooktest.Response{Stdout: "o", Stderr: "fatal: https://user:pw@example.com/k.git not found", Returncode: 128})
	want := `{"deploy_status_code": 128, "deploy_stdout": "o", "deploy_stderr": "fatal: https://example.com/k.git not found"}`
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d\n got %s\nwant %s", r.Code, r.Stdout, want)
	}
	if hooktest.Calls(f.state) != 1 || strings.Contains(r.Stderr, "pw@") {
		t.Errorf("calls %d, log %s", hooktest.Calls(f.state), r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(kitchen, "old")); err == nil {
		t.Error("the old kitchen was kept on UPDATE")
	}
}

// Decision: `hostname -f` failing is a failed deployment saying so (the
// reference crashed on its own message); a config that is no JSON is one
// error line, exit 1 (the reference crashed too).
func TestHostnameAndConfigErrors(t *testing.T) {
	f := setup(t)
	r := f.run(t, data(`{}`), hooktest.Response{Returncode: 1})
	if want := `{"deploy_status_code": 1, "deploy_stdout": "", "deploy_stderr": "Could not determine hostname with hostname -f"}`; r.Code != 0 || r.Stdout != want {
		t.Errorf("exit %d: %s", r.Code, r.Stdout)
	}
	f = setup(t)
	r = f.run(t, strings.Replace(data(`{}`), `"[\"recipe[apache]\"]"`, `"recipe[apache]"`, 1), nil)
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "the chef config is not a JSON run list") {
		t.Errorf("exit %d %q: %s", r.Code, r.Stdout, r.Stderr)
	}
}

// chef-client not installed: 127 saying so, not a crash.
func TestChefNotInstalled(t *testing.T) {
	f := setup(t)
	r := f.run(t, data(`{}`), outErr, "HEAT_CHEF_CMD=no-such-chef-client")
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || res["deploy_status_code"] != 127.0 || res["deploy_stderr"] != "no-such-chef-client: command not found" {
		t.Errorf("result %s (%v)", r.Stdout, err)
	}
	if want := "[ERROR] no-such-chef-client is not installed\n"; !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "yet") {
		t.Errorf("log\n%s\nwant the line %q", r.Stderr, want)
	}
}
