package dockercompose_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/dockercompose"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, dockercompose.Hook) }

type fixture struct{ working, outputs, bin, state, tool string }

func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), outputs: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(f.outputs, "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		dockercompose.WorkingVar + "=" + f.working, dockercompose.CmdVar + "=" + f.tool,
	}, vars...)...)
}

// The reference test's deployments as they are, without an id (the
// reference hook reads the name, never the id: Hook.IDOptional).
const (
	services = `"config": {"web": {"name": "x", "env_file": ["./common.env", "./test.env"]}, "db": {"name": "y", "env_file": "./test1.env"}}`
	envFiles = `[ { \"file_name\": \"./common.env\", \"content\": \"xxxxx\" }, { \"file_name\": \"./test.env\", \"content\": \"yyyy\" }, { \"file_name\": \"./test1.env\", \"content\": \"zzz\" } ]`
	data     = `{"name": "abcdef001", "group": "docker-compose", "inputs": [{"name": "env_files", "value": "` + envFiles + `"}], ` + services + `}`
	noInputs = `{"name": "abcdef001", "group": "docker-compose", "inputs": [], ` + services + `}`
)

// test_hook_docker_compose.py: test_hook, test_hook_without_inputs and
// test_hook_failed: `docker-compose up -d --no-build` in the project,
// its output and status as the result; the env files the services name
// written from the env_files input (0600).
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdin  string
		resp   hooktest.Response
		result string
		files  bool
	}{
		{"test_hook", data, hooktest.Response{Stderr: "Creating abcdef001_db_1..."},
			`{"deploy_stdout": "", "deploy_stderr": "Creating abcdef001_db_1...", "deploy_status_code": 0}`, true},
		{"test_hook_without_inputs", noInputs, hooktest.Response{Stderr: "env_file_not found...", Returncode: 1},
			`{"deploy_stdout": "", "deploy_stderr": "env_file_not found...", "deploy_status_code": 1}`, false},
		{"test_hook_failed", data, hooktest.Response{Stderr: "Error: image library/xxx:latest not found", Returncode: 1},
			`{"deploy_stdout": "", "deploy_stderr": "Error: image library/xxx:latest not found", "deploy_status_code": 1}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			r := hooktest.Run(t, dockercompose.Hook, tc.stdin, f.environ(t, tc.resp))
			if r.Code != 0 || r.Stdout != tc.result {
				t.Fatalf("exit %d, stdout %s, want %s\n%s", r.Code, r.Stdout, tc.result, r.Stderr)
			}
			st := hooktest.ReadState(t, f.state, 0)
			proj := filepath.Join(f.working, "abcdef001")
			if !slices.Equal(st.Args, []string{f.tool, "up", "-d", "--no-build"}) || st.Cwd != proj {
				t.Errorf("argv %q in %s", st.Args, st.Cwd)
			}
			if hooktest.Mode(t, proj) != 0o700 {
				t.Errorf("project mode %o", hooktest.Mode(t, proj))
			}
			for name, want := range map[string]string{"common.env": "xxxxx", "test.env": "yyyy", "test1.env": "zzz"} {
				p := filepath.Join(proj, name)
				if !tc.files {
					if fileExists(p) {
						t.Errorf("%s written without the input", name)
					}
					continue
				}
				if got := hooktest.ReadFile(t, p); got != want || hooktest.Mode(t, p) != 0o600 {
					t.Errorf("%s: %q mode %o", name, got, hooktest.Mode(t, p))
				}
			}
			if !strings.Contains(r.Stderr, "[DEBUG] Running ['"+f.tool+"', 'up', '-d', '--no-build']\n") {
				t.Errorf("log %s", r.Stderr)
			}
		})
	}
}

// env_files as Heat hands a list to a String input (Python's repr), as
// a list (a Json input), with services under "services" (compose files
// of version 2 and 3) and a YAML string config; an env file is replaced
// whole; names the services do not use are not written.
func TestEnvFiles(t *testing.T) {
	for _, tc := range []struct{ name, input, config string }{
		{"python repr", `"[{'file_name': 'a.env', 'content': 'A=1\\n'}, {'file_name': 'unused.env', 'content': 'x'}]"`, `{"web": {"env_file": "a.env"}}`},
		{"json list", `[{"file_name": "a.env", "content": "A=1\n"}]`, `{"web": {"env_file": ["a.env"]}}`},
		{"version 3", `"[{\"file_name\": \"a.env\", \"content\": \"A=1\\n\"}]"`, `{"version": "3", "services": {"web": {"env_file": "a.env"}}}`},
		{"yaml string", `[{"file_name": "a.env", "content": "A=1\n"}]`, `"version: '2'\nservices:\n  web:\n    image: busybox\n    env_file:\n    - a.env\n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			proj := filepath.Join(f.working, "p")
			writeFile(t, filepath.Join(proj, "a.env"), "A=an older and longer content\n")
			d := `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [{"name": "env_files", "value": ` + tc.input + `}], "config": ` + tc.config + `}`
			r := hooktest.Run(t, dockercompose.Hook, d, f.environ(t, nil))
			if r.Code != 0 || r.JSON(t)["deploy_status_code"] != 0.0 {
				t.Fatalf("exit %d, %s\n%s", r.Code, r.Stdout, r.Stderr)
			}
			if got := hooktest.ReadFile(t, filepath.Join(proj, "a.env")); got != "A=1\n" {
				t.Errorf("a.env %q", got)
			}
			if fileExists(filepath.Join(proj, "unused.env")) {
				t.Error("unused.env written")
			}
		})
	}
}

// A DELETE action and an empty config succeed without running
// docker-compose (the reference meant to, and crashed on its empty
// result); a name that is not one directory's, a config that is not a
// mapping and an env_files input that is not a list of files are the
// hook's errors; docker-compose missing is status 127, saying so.
func TestEdges(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		code        int
		status      float64
		calls       int
		log         string
	}{
		{"delete", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [{"name": "deploy_action", "value": "DELETE"}], ` + services + `}`, 0, 0, 0, ""},
		{"empty config", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [], "config": ""}`, 0, 0, 0, "No 'config' input found, nothing to do."},
		{"no name", `{"id": "1", "group": "docker-compose", "inputs": [], ` + services + `}`, 1, 0, 0, `deployment name "" cannot name`},
		{"name with a slash", `{"id": "1", "name": "../x", "group": "docker-compose", "inputs": [], ` + services + `}`, 1, 0, 0, `deployment name "../x" cannot name`},
		{"list config", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [], "config": [1]}`, 1, 0, 0, "not a mapping of services"},
		{"bad env_files", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [{"name": "env_files", "value": "[{'file_name': 1}]"}], ` + services + `}`, 1, 0, 0, "env_files is not a list"},
		{"bad literal", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [{"name": "env_files", "value": "[{"}], ` + services + `}`, 1, 0, 0, "not a Python literal"},
		{"not found", `{"id": "1", "name": "p", "group": "docker-compose", "inputs": [], ` + services + `}`, 0, 127, 0, "Error running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			env := f.environ(t, nil)
			if tc.name == "not found" {
				env = f.environ(t, nil, dockercompose.CmdVar+"=no-such-docker-compose")
			}
			r := hooktest.Run(t, dockercompose.Hook, tc.stdin, env)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.log) || hooktest.Calls(f.state) != tc.calls {
				t.Fatalf("exit %d, calls %d, stdout %s\n%s", r.Code, hooktest.Calls(f.state), r.Stdout, r.Stderr)
			}
			if tc.code == 0 && r.JSON(t)["deploy_status_code"] != tc.status {
				t.Errorf("result %s", r.Stdout)
			}
		})
	}
}
