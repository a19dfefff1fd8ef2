package dockercompose_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/dockercompose"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// runConfigure runs 50-heat-config-docker-compose on the deployments
// (JSON; "" for no file), and returns its exit status and log.
func runConfigure(t *testing.T, f *fixture, deployments string) (int, string) {
	return runConfigureResp(t, f, deployments, "")
}

// test_heat_config_docker_compose.py: test_run_heat_config. Each
// deployment's config is <working>/<name>/docker-compose.yml as
// yaml.safe_dump(config, default_flow_style=False) wrote it (0600); the
// fake hook file the reference test leaves in the directory is not a
// project.
func TestConfigure(t *testing.T) {
	f := setup(t)
	writeFile(t, filepath.Join(f.working, "docker-compose"), "#!/bin/sh\n")
	deployments := `[
	{"name": "abcdef001", "group": "docker-compose", "inputs": {},
	 "config": {"web": {"image": "nginx", "links": ["db"], "ports": ["8000:8000"]}, "db": {"image": "redis"}}},
	{"name": "abcdef002", "group": "docker-compose", "inputs": {},
	 "config": {"web": {"image": "httpd", "links": ["db"], "ports": ["80:8001"]}, "db": {"image": "postgress"}}},
	{"name": "text", "group": "docker-compose", "config": "web:\n  image: nginx\n"},
	{"name": "other", "group": "script", "config": "echo"}]`
	if code, log := runConfigure(t, f, deployments); code != 0 {
		t.Fatalf("exit %d: %s", code, log)
	}
	for name, want := range map[string]string{
		"abcdef001": "db:\n  image: redis\nweb:\n  image: nginx\n  links:\n  - db\n  ports:\n  - 8000:8000\n",
		"abcdef002": "db:\n  image: postgress\nweb:\n  image: httpd\n  links:\n  - db\n  ports:\n  - 80:8001\n",
		"text":      "web:\n  image: nginx\n",
	} {
		p := filepath.Join(f.working, name, "docker-compose.yml")
		if got := hooktest.ReadFile(t, p); got != want || hooktest.Mode(t, p) != 0o600 {
			t.Errorf("%s: %q mode %o", name, got, hooktest.Mode(t, p))
		}
	}
	if fileExists(filepath.Join(f.working, "other")) || hooktest.Calls(f.state) != 0 {
		t.Error("a script deployment got a project, or docker-compose ran")
	}
}

// A project no deployment names any more (of any group) has its
// containers killed (`docker-compose kill` in it) and its
// docker-compose.yml removed; its env files stay, as in the reference.
// A kill that fails is a warning, and the project is retired anyway.
func TestConfigureRetiresStaleProjects(t *testing.T) {
	for _, killStatus := range []int{0, 1} {
		f := setup(t)
		for _, name := range []string{"gone", "kept", "renamed-group"} {
			writeFile(t, filepath.Join(f.working, name, "docker-compose.yml"), "web: {}\n")
		}
		writeFile(t, filepath.Join(f.working, "gone", "a.env"), "A=1")
		conf := `[{"name": "kept", "group": "docker-compose", "config": {"web": {"image": "x"}}}, {"name": "renamed-group", "group": "script"}]`
		resp, _ := json.Marshal(hooktest.Response{Stderr: "kill failed", Returncode: killStatus})
		code, log := runConfigureResp(t, f, conf, string(resp))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, log)
		}
		if n := hooktest.Calls(f.state); n != 1 {
			t.Fatalf("%d calls of docker-compose", n)
		}
		st := hooktest.ReadState(t, f.state, 0)
		if !slices.Equal(st.Args, []string{f.tool, "kill"}) || st.Cwd != filepath.Join(f.working, "gone") {
			t.Errorf("argv %q in %s", st.Args, st.Cwd)
		}
		if fileExists(filepath.Join(f.working, "gone", "docker-compose.yml")) || !fileExists(filepath.Join(f.working, "gone", "a.env")) {
			t.Error("gone: docker-compose.yml kept or env file removed")
		}
		if !fileExists(filepath.Join(f.working, "renamed-group", "docker-compose.yml")) {
			t.Error("a project named by a deployment of another group was retired")
		}
		if (killStatus != 0) != strings.Contains(log, "[WARNING]") {
			t.Errorf("kill status %d: log %s", killStatus, log)
		}
	}
}

func runConfigureResp(t *testing.T, f *fixture, deployments, resp string) (int, string) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "heat-config")
	if deployments != "" {
		writeFile(t, conf, deployments)
	}
	vars := []string{dockercompose.ConfigVar + "=" + conf}
	if resp != "" {
		vars = append(vars, hooktest.ResponseVar+"="+resp)
	}
	var log strings.Builder
	env := hooks.Env{Environ: f.environ(t, nil, vars...), Log: hooktest.Logger(&log)}
	err := hooks.RunScript(context.Background(), dockercompose.Configure, nil, env)
	return exitcode.Of(err), log.String()
}

// No deployments file, or one that is not a JSON list: one error line,
// status 1, nothing retired (the reference crashed). A config of
// another shape is logged and skipped, status 0: the hook reports that
// deployment's failure, and the others still run (the reference failed
// the whole os-refresh-config pass).
func TestConfigureErrors(t *testing.T) {
	f := setup(t)
	writeFile(t, filepath.Join(f.working, "p", "docker-compose.yml"), "web: {}\n")
	for _, tc := range []struct{ deployments, log string }{
		{"", "[ERROR] No config file "},
		{"{", "[ERROR] "},
		{"{}", "not a list"},
	} {
		code, log := runConfigure(t, f, tc.deployments)
		if code != 1 || !strings.Contains(log, tc.log) || !fileExists(filepath.Join(f.working, "p", "docker-compose.yml")) {
			t.Errorf("%q: exit %d, log %s", tc.deployments, code, log)
		}
	}
	code, log := runConfigure(t, f, `[{"name": "p", "group": "docker-compose", "config": [1]}, {"name": "q", "group": "docker-compose", "config": {"a": {}}}]`)
	if code != 0 || !strings.Contains(log, "neither a mapping nor YAML text") || !fileExists(filepath.Join(f.working, "q", "docker-compose.yml")) {
		t.Errorf("exit %d, log %s", code, log)
	}
}

// Without docker-compose deployments nothing is left behind: make
// install lays the script out on every node.
func TestConfigureWithoutProjectsLeavesNothing(t *testing.T) {
	f := setup(t)
	f.working = filepath.Join(f.working, "absent")
	if code, log := runConfigure(t, f, `[{"id": "1", "name": "a", "group": "script"}]`); code != 0 || fileExists(f.working) {
		t.Errorf("exit %d, log %s", code, log)
	}
}

// On a node without docker-compose no container of a project can run,
// so a project no deployment names is retired without a kill, and one
// WARNING line says so for the run, naming the projects; the next run,
// with nothing left to retire, says nothing (the reference crashed on
// the missing command, status 1, on every pass).
func TestConfigureWithoutDockerCompose(t *testing.T) {
	f := setup(t)
	for _, name := range []string{"gone", "old", "kept"} {
		writeFile(t, filepath.Join(f.working, name, "docker-compose.yml"), "web: {}\n")
	}
	conf := filepath.Join(t.TempDir(), "heat-config")
	writeFile(t, conf, `[{"name": "kept", "group": "docker-compose", "config": {"web": {"image": "x"}}}]`)
	pass := func() (int, string) {
		var log strings.Builder
		env := hooks.Env{Environ: f.environ(t, nil, dockercompose.ConfigVar+"="+conf, dockercompose.CmdVar+"=no-such-docker-compose"),
			Log: hooktest.Logger(&log)}
		return exitcode.Of(hooks.RunScript(context.Background(), dockercompose.Configure, nil, env)), log.String()
	}
	code, log := pass()
	want := "[WARNING] no-such-docker-compose is not installed: the projects no deployment names (gone, old, in " + f.working + ") are retired without docker-compose kill\n"
	if code != 0 || strings.Count(log, "\n") != 1 || !strings.HasSuffix(log, want) {
		t.Errorf("first run: exit %d, log\n%s\nwant the one line %q", code, log, want)
	}
	for _, name := range []string{"gone", "old"} {
		if fileExists(filepath.Join(f.working, name, "docker-compose.yml")) {
			t.Errorf("%s was not retired", name)
		}
	}
	if !fileExists(filepath.Join(f.working, "kept", "docker-compose.yml")) {
		t.Error("kept was retired")
	}
	if code, log := pass(); code != 0 || log != "" {
		t.Errorf("second run: exit %d, log %q", code, log)
	}
}
