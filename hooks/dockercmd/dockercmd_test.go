package dockercmd_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, dockercmd.Hook) }

type fixture struct{ bin, state, tool string }

func setup(t *testing.T) *fixture {
	f := &fixture{bin: t.TempDir()}
	f.state = filepath.Join(t.TempDir(), "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{dockercmd.CmdVar + "=" + f.tool}, vars...)...)
}

// data is the reference test's deployment: db (start_order 0), web (1),
// then web-ls (2), an exec in web; written in another order.
const data = `{"name": "abcdef001", "group": "docker-cmd", "id": "abc123",
 "inputs": [{"name": "deploy_stack_id", "value": "the_stack"}, {"name": "deploy_resource_name", "value": "the_deployment"}],
 "config": {
  "db": {"name": "x", "image": "xxx", "privileged": false, "environment": ["foo=bar"], "env_file": "env.file", "start_order": 0},
  "web-ls": {"action": "exec", "start_order": 2, "command": ["web", "/bin/ls", "-l"]},
  "web": {"name": "y", "start_order": 1, "image": "yyy", "net": "host", "restart": "always", "privileged": true,
   "user": "root", "command": "/bin/webserver start", "volumes": ["/run:/run", "db:/var/lib/db"],
   "environment": ["KOLLA_CONFIG_STRATEGY=COPY_ALWAYS", "FOO=BAR"], "env_file": ["foo.env", "bar.conf"]}}}`

// dataExitCodes is the reference's data_exit_code: no inputs.
const dataExitCodes = `{"name": "abcdef001", "group": "docker-cmd", "id": "abc123",
 "config": {"web-ls": {"action": "exec", "command": ["web", "/bin/ls", "-l"], "exit_codes": [0, 1]}}}`

func (f *fixture) inspect(name string) []string {
	return []string{f.tool, "inspect", "--format", "exists", name}
}

func (f *fixture) labels(container string) []string {
	return []string{"--label", "deploy_stack_id=the_stack", "--label", "deploy_resource_name=the_deployment",
		"--label", "config_id=abc123", "--label", "container_name=" + container, "--label", "managed_by=docker-cmd"}
}

func (f *fixture) runDB(name string) []string {
	return slices.Concat([]string{f.tool, "run", "--name", name}, f.labels("db"),
		[]string{"--detach=true", "--env-file=env.file", "--env=foo=bar", "--privileged=false", "xxx"})
}

func (f *fixture) runWeb(name string) []string {
	return slices.Concat([]string{f.tool, "run", "--name", name}, f.labels("web"), []string{
		"--detach=true", "--env-file=foo.env", "--env-file=bar.conf",
		"--env=KOLLA_CONFIG_STRATEGY=COPY_ALWAYS", "--env=FOO=BAR", "--net=host", "--privileged=true",
		"--restart=always", "--user=root", "--volume=/run:/run", "--volume=db:/var/lib/db",
		"yyy", "/bin/webserver", "start"})
}

func (f *fixture) psWeb() []string {
	return []string{f.tool, "ps", "-a", "--filter", "label=container_name=web", "--filter", "label=config_id=abc123", "--format", "{{.Names}}"}
}

func (f *fixture) execWeb(name string) []string {
	return []string{f.tool, "exec", name, "/bin/ls", "-l"}
}

type rsp = hooktest.Response

// test_hook_docker_cmd.py's hook rows: test_hook, test_hook_exit_codes,
// test_hook_failed and test_hook_unique_names: the tool's answers, the
// exact argv of each call, the result.
func TestHook(t *testing.T) {
	noDB := rsp{Stderr: "Error: No such image, container or task: db", Returncode: 1}
	noWeb := rsp{Stderr: "Error: No such image, container or task: web", Returncode: 1}
	for _, tc := range []struct {
		name   string
		data   string
		resp   []rsp
		argv   func(f *fixture, st []hooktest.State) [][]string
		result string // golden file
	}{
		{"test_hook", data,
			[]rsp{noDB, {Stderr: "Creating db..."}, noWeb, {Stderr: "Creating web..."}, {Stdout: "web"}, {Stderr: "one.txt\ntwo.txt\nthree.txt"}},
			func(f *fixture, _ []hooktest.State) [][]string {
				return [][]string{f.inspect("db"), f.runDB("db"), f.inspect("web"), f.runWeb("web"), f.psWeb(), f.execWeb("web")}
			}, "hook.json"},
		{"test_hook_exit_codes", dataExitCodes,
			[]rsp{{Stdout: "web"}, {Stderr: "Warning: custom exit code", Returncode: 1}},
			func(f *fixture, _ []hooktest.State) [][]string { return [][]string{f.psWeb(), f.execWeb("web")} },
			"exit_codes.json"},
		{"test_hook_failed", data,
			[]rsp{noDB, {Stderr: "Creating db..."}, noWeb, {Stderr: "Creating web..."}, {Stdout: "web"}, {Stderr: "No such file or directory", Returncode: 2}},
			func(f *fixture, _ []hooktest.State) [][]string {
				return [][]string{f.inspect("db"), f.runDB("db"), f.inspect("web"), f.runWeb("web"), f.psWeb(), f.execWeb("web")}
			}, "failed.json"},
		{"test_hook_unique_names", data,
			[]rsp{{Stdout: "exists\n"}, {Stderr: "Error: No such image, container or task: db-blah", Returncode: 1}, {Stderr: "Creating db..."},
				{Stdout: "exists\n"}, {Stderr: "Error: No such image, container or task: web-blah", Returncode: 1}, {Stderr: "Creating web..."},
				{Stdout: "web-asdf1234"}, {Stderr: "one.txt\ntwo.txt\nthree.txt"}},
			func(f *fixture, st []hooktest.State) [][]string {
				db, web := st[1].Args[4], st[4].Args[4]
				for _, n := range []string{db, web} {
					if !regexp.MustCompile(`^(db|web)-[0-9a-z]{8}$`).MatchString(n) {
						t.Errorf("unique name %q", n)
					}
				}
				return [][]string{f.inspect("db"), f.inspect(db), f.runDB(db), f.inspect("web"), f.inspect(web), f.runWeb(web),
					f.psWeb(), f.execWeb("web-asdf1234")}
			}, "hook.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := hooktest.Run(t, dockercmd.Hook, tc.data, f.environ(t, tc.resp))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			hooktest.Golden(t, tc.result, r.Stdout)
			if n := hooktest.Calls(f.state); n != len(tc.resp) {
				t.Fatalf("%d calls, want %d", n, len(tc.resp))
			}
			var st []hooktest.State
			for i := range tc.resp {
				st = append(st, hooktest.ReadState(t, f.state, i))
			}
			for i, want := range tc.argv(f, st) {
				if !slices.Equal(st[i].Args, want) {
					t.Errorf("call %d\n got %q\nwant %q", i, st[i].Args, want)
				}
			}
		})
	}
}

// A DELETE, and a deployment without config, run nothing.
func TestNothingToDo(t *testing.T) {
	for _, d := range []string{
		`{"id": "1", "group": "docker-cmd", "inputs": [{"name": "deploy_action", "value": "DELETE"}], "config": {"a": {"image": "x"}}}`,
		`{"id": "1", "group": "docker-cmd", "inputs": [], "config": {}}`,
		`{"id": "1", "group": "docker-cmd", "inputs": []}`,
		`{"id": "1", "group": "docker-cmd", "inputs": [], "config": "# nothing\n"}`,
	} {
		f := setup(t)
		r := hooktest.Run(t, dockercmd.Hook, d, f.environ(t, nil))
		if r.Code != 0 || r.Stdout != `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}` || hooktest.Calls(f.state) != 0 {
			t.Errorf("%s: exit %d, %s, %d calls", d, r.Code, r.Stdout, hooktest.Calls(f.state))
		}
	}
}

// Configs the reference crashed on, part way through or before running
// anything, are refused whole before any container runs: exit 1, one
// error line naming the container and key.
func TestRefusedConfigs(t *testing.T) {
	for config, want := range map[string]string{
		`{"a": {"image": "x"}, "b": {"action": "stop"}}`: `container "b": action "stop" is neither run nor exec`,
		`{"a": {"action": "exec"}}`:                      `container "a": exec needs a command, the container first`,
		`{"a": {"image": "x", "exit_codes": 0}}`:         `container "a": exit_codes is a number, not a list`,
		`{"a": {"image": "x", "start_order": "1"}}`:      `container "a": start_order is text, not a number`,
		`{"a": {"image": "x", "environment": null}}`:     `container "a": environment is null, not a list`,
		`{"a": "x"}`: `container "a" is text, not an object`,
		`["a"]`:      `the config is a list, not an object of containers`,
		`"a: [1\n"`:  `invalid YAML: line 1: did not find expected ',' or ']'`,
		`"- a\n"`:    `the config is a list, not an object of containers`,
		`{"a": {"image": "x", "command": {"x": 1}}}`:                     `container "a": command is an object, not a list or text`,
		`{"a": {"image": "x"}, "b": {"image": "y", "start_order": [1]}}`: `container "b": start_order is a list, not a number`,
	} {
		f := setup(t)
		r := hooktest.Run(t, dockercmd.Hook, `{"id": "1", "group": "docker-cmd", "inputs": [], "config": `+config+`}`, f.environ(t, nil))
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "[ERROR] unusable config: "+want+"\n") || hooktest.Calls(f.state) != 0 {
			t.Errorf("%s: exit %d, %d calls, log %s", config, r.Code, hooktest.Calls(f.state), r.Stderr)
		}
	}
}
