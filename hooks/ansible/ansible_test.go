package ansible_test

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/ansible"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, ansible.Hook) }

type fixture struct {
	working, outputs, bin, state, tool string
}

func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), outputs: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(f.outputs, "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_ANSIBLE_WORKING=" + f.working, "HEAT_ANSIBLE_OUTPUTS=" + f.outputs, "HEAT_ANSIBLE_CMD=" + f.tool,
	}, vars...)...)
}

func data(options string) string {
	return `{"id": "1234", "name": "fake_resource_name", "group": "ansible", "options": ` + options + `,
	"inputs": [{"name": "foo", "value": "bar"}, {"name": "another", "value": "input"}],
	"config": "the ansible playbook"}`
}

var success = hooktest.Response{Stdout: "ansible success", Stderr: "thing happened"}

// test_hook_ansible.py, one row per test: the options become flags
// between the inventory and the playbook (--module-path, --skip-tags,
// --tags, in that order; empty ones left out), callback_plugins an
// environment variable, HEAT_ANSIBLE_INVENTORY the inventory; the tool's
// status is the deployment's.
func TestHook(t *testing.T) {
	const mp = "/opt/ansible:/usr/share/ansible"
	for _, tc := range []struct {
		name    string
		options string
		vars    []string
		resp    hooktest.Response
		flags   []string
		inv     string
		golden  string
	}{
		{name: "test_hook", options: `{}`},
		{name: "test_hook_tags", options: `{"tags": "abc,def"}`, flags: []string{"--tags", "abc,def"}},
		{name: "test_hook_skip_tags", options: `{"skip_tags": "abc,def"}`, flags: []string{"--skip-tags", "abc,def"}},
		{name: "test_hook_skip_tags_empty", options: `{"skip_tags": ""}`},
		{name: "test_hook_tags_skip_tags", options: `{"tags": "abc,def", "skip_tags": "abc"}`, flags: []string{"--skip-tags", "abc", "--tags", "abc,def"}},
		{name: "test_hook_modulepath", options: `{"modulepath": "` + mp + `"}`, flags: []string{"--module-path", mp}},
		{name: "test_hook_tags_modulepath", options: `{"modulepath": "` + mp + `", "tags": "abc,def"}`, flags: []string{"--module-path", mp, "--tags", "abc,def"}},
		{name: "test_hook_skip_tags_modulepath", options: `{"modulepath": "` + mp + `", "skip_tags": "abc,def"}`, flags: []string{"--module-path", mp, "--skip-tags", "abc,def"}},
		{name: "test_hook_with_callback_plugins", options: `{"callback_plugins": "/usr/lib/python/foo"}`},
		{name: "test_hook_inventory", options: `{}`, vars: []string{"HEAT_ANSIBLE_INVENTORY=localhost test_var=123,"}, inv: "localhost test_var=123,"},
		{name: "test_hook_ansible_failed", options: `{}`, resp: hooktest.Response{Stdout: "ansible failed", Stderr: "bad thing happened", Returncode: 4}, golden: "failed.json"},
		{name: "null options", options: `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			if tc.resp.Stdout == "" {
				tc.resp = success
			}
			r := hooktest.Run(t, ansible.Hook, data(tc.options), f.environ(t, tc.resp, tc.vars...))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			hooktest.Golden(t, cmp.Or(tc.golden, "hook.json"), r.Stdout)
			st := hooktest.ReadState(t, f.state, 0)
			playbook := filepath.Join(f.working, "1234_playbook.yaml")
			varsFile := filepath.Join(f.working, "1234_variables.json")
			want := slices.Concat([]string{f.tool, "-i", cmp.Or(tc.inv, "localhost,")}, tc.flags, []string{playbook, "--extra-vars", "@" + varsFile})
			if !slices.Equal(st.Args, want) {
				t.Errorf("argv\n got %q\nwant %q", st.Args, want)
			}
			cb, ok := st.Env["ANSIBLE_CALLBACK_PLUGINS"]
			if wantCB := tc.name == "test_hook_with_callback_plugins"; ok != wantCB || wantCB && cb != "/usr/lib/python/foo" {
				t.Errorf("ANSIBLE_CALLBACK_PLUGINS=%q (set %v)", cb, ok)
			}
			vars := `{"heat_config_id": "1234", "foo": "bar", "another": "input", "heat_outputs_path": "` + filepath.Join(f.outputs, "1234") + `"}`
			if got := hooktest.ReadFile(t, varsFile); got != vars || hooktest.Mode(t, varsFile) != 0o600 {
				t.Errorf("variables %q mode %o\nwant %q", got, hooktest.Mode(t, varsFile), vars)
			}
			if got := hooktest.ReadFile(t, playbook); got != "the ansible playbook" || hooktest.Mode(t, playbook) != 0o600 {
				t.Errorf("playbook %q mode %o", got, hooktest.Mode(t, playbook))
			}
			if st.Cwd != f.working {
				t.Errorf("cwd %s", st.Cwd)
			}
		})
	}
}

// options.inventory is a file in the working directory that replaces the
// inventory argument.
func TestInventoryOption(t *testing.T) {
	f := setup(t)
	hooktest.Run(t, ansible.Hook, data(`{"inventory": "hosts.ini"}`), f.environ(t, success))
	if st := hooktest.ReadState(t, f.state, 0); st.Args[2] != filepath.Join(f.working, "hosts.ini") {
		t.Errorf("argv %q", st.Args)
	}
}

// Decision: an empty config keeps the reference's warning and its success,
// but Heat gets a result saying there was nothing to do (the reference
// printed nothing); no tool runs and no file is written.
func TestEmptyConfig(t *testing.T) {
	for _, config := range []string{`""`, `null`, `[]`} {
		f := setup(t)
		r := hooktest.Run(t, ansible.Hook, `{"id": "1", "group": "ansible", "inputs": [], "config": `+config+`}`, f.environ(t, success))
		want := `{"deploy_stdout": "", "deploy_stderr": "No 'config' input found, nothing to do.", "deploy_status_code": 0}`
		if r.Code != 0 || r.Stdout != want || hooktest.Calls(f.state) != 0 {
			t.Errorf("config %s: exit %d, stdout %s, calls %d", config, r.Code, r.Stdout, hooktest.Calls(f.state))
		}
		if !strings.Contains(r.Stderr, "[WARNING] No 'config' input found, nothing to do.\n") {
			t.Errorf("log %s", r.Stderr)
		}
	}
}

// A structured config (a playbook as a list) is written as JSON, which is
// YAML (the reference crashed on it).
func TestStructuredPlaybook(t *testing.T) {
	f := setup(t)
	hooktest.Run(t, ansible.Hook, `{"id": "1", "group": "ansible", "inputs": [], "config": [{"hosts": "all"}]}`, f.environ(t, success))
	if got := hooktest.ReadFile(t, filepath.Join(f.working, "1_playbook.yaml")); got != `[{"hosts": "all"}]` {
		t.Errorf("playbook %q", got)
	}
}

// Decision: ansible-playbook not installed is a failed deployment (127,
// saying so), where the reference printed nothing and Heat saw success.
func TestAnsibleNotInstalled(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, ansible.Hook, data(`{}`), f.environ(t, nil, "HEAT_ANSIBLE_CMD=ansible-playbook", "PATH="+f.bin))
	want := `{"deploy_stdout": "", "deploy_stderr": "ansible-playbook: command not found", "deploy_status_code": 127}`
	if r.Code != 0 || r.Stdout != want || !strings.Contains(r.Stderr, "[WARNING] ansible not installed yet\n") {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// Declared outputs are read after the run and come first.
func TestOutputs(t *testing.T) {
	f := setup(t)
	d := `{"id": "1", "group": "ansible", "inputs": [], "config": "x", "outputs": [{"name": "result"}, {"name": "missing"}]}`
	r := hooktest.Run(t, ansible.Hook, d, f.environ(t, hooktest.Response{Files: map[string]string{filepath.Join(f.outputs, "1.result"): "done"}}))
	want := `{"result": "done", "deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}`
	if r.Stdout != want {
		t.Errorf("\n got %s\nwant %s", r.Stdout, want)
	}
}
