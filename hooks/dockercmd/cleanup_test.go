package dockercmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// deployment is the reference test's data, cut to what the script reads.
func deployment(id string) string {
	return `{"name": "abcdef001", "group": "docker-cmd", "id": "` + id + `", "inputs": [], "config": {"db": {"image": "xxx"}}}`
}

type run struct {
	list  string // the deployments list; "" for no file
	resp  []hooktest.Response
	calls [][]string // argv after the tool
}

// seenFile is where the script notes that the node has had a docker-cmd
// deployment: beside the fake tool, so the runs of one test share it.
func seenFile(tool string) string { return filepath.Join(filepath.Dir(tool), "docker-cmd.seen") }

// hadDockerCmd notes it beforehand, as an earlier run would have.
func hadDockerCmd(t *testing.T, tool string) {
	t.Helper()
	if err := os.WriteFile(seenFile(tool), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// do runs the script once with a fresh state path and checks its calls;
// it returns the exit status and the log.
func do(t *testing.T, tool string, r run) (int, string) {
	t.Helper()
	dir := t.TempDir()
	list := filepath.Join(dir, "heat-config")
	if r.list != "" {
		if err := os.WriteFile(list, []byte(r.list), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(dir, "test_state.json")
	var stderr bytes.Buffer
	err := hooks.RunScript(context.Background(), dockercmd.Cleanup, nil, hooks.Env{Stderr: &stderr, Environ: hooktest.Environ(t, filepath.Dir(tool), state, r.resp,
		dockercmd.CmdVar+"="+tool, hooks.DeploymentsVar+"="+list, dockercmd.SeenVar+"="+seenFile(tool))})
	if n := hooktest.Calls(state); n != len(r.calls) {
		t.Fatalf("%d calls, want %d\n%s", n, len(r.calls), stderr.String())
	}
	for i, want := range r.calls {
		want = append([]string{tool}, want...)
		if got := hooktest.ReadState(t, state, i).Args; !slices.Equal(got, want) {
			t.Errorf("call %d\n got %q\nwant %q", i, got, want)
		}
	}
	return exitcode.Of(err), stderr.String()
}

var (
	psIDs   = []string{"ps", "-a", "--filter", "label=managed_by=docker-cmd", "--format", `{{.Label "config_id"}}`}
	psNames = []string{"ps", "-a", "--format", `{{.Names}} {{.Label "container_name"}}`}
	psABC   = []string{"ps", "-q", "-a", "--filter", "label=managed_by=docker-cmd", "--filter", "label=config_id=abc123"}
	three   = []hooktest.Response{{Stdout: "abc123\nabc123\nabc123\n"}, {Stdout: "111\n222\n333\n"},
		{Stdout: "111 deleted"}, {Stdout: "222 deleted"}, {Stdout: "333 deleted"}}
	removed = [][]string{psIDs, psABC, {"rm", "-f", "111"}, {"rm", "-f", "222"}, {"rm", "-f", "333"}, psNames}
)

// test_hook_docker_cmd.py's cleanup rows: test_cleanup_deleted,
// test_cleanup_changed and test_cleanup_rename, each a sequence of runs
// with the tool's answers and the exact argv of each call.
func TestCleanup(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs []run
	}{
		{"test_cleanup_deleted", []run{
			// First run: no containers.
			{"[" + deployment("abc123") + "]", []hooktest.Response{{Stdout: "\n"}, {Stdout: "\n"}}, [][]string{psIDs, psNames}},
			// The deployment is gone: its three containers are removed.
			{"[]", append(slices.Clone(three), hooktest.Response{Stdout: "\n"}), removed},
		}},
		{"test_cleanup_changed", []run{
			{"[" + deployment("abc123") + "]", []hooktest.Response{{Stdout: "abc123\nabc123\nabc123\n"}, {Stdout: "111 111\n222 222\n333\n"}},
				[][]string{psIDs, psNames}},
			// Replaced by def456: abc123's containers are removed.
			{"[" + deployment("def456") + "]", append(slices.Clone(three), hooktest.Response{Stdout: "abc123 abc123\n"}), removed},
		}},
		{"test_cleanup_rename", []run{
			{"[" + deployment("abc123") + "]", []hooktest.Response{{Stdout: "abc123\nabc123\nabc123\n"},
				{Stdout: "111 111-s84nf83h\n222 222\n333 333-3nd83nfi\n"}},
				[][]string{psIDs, psNames, {"rename", "111", "111-s84nf83h"}, {"rename", "333", "333-3nd83nfi"}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := hooktest.Tool(t, t.TempDir(), "config-tool-fake")
			for _, r := range tc.runs {
				if code, log := do(t, tool, r); code != 0 {
					t.Fatalf("exit %d\n%s", code, log)
				}
			}
		})
	}
}

// A container whose wanted name is taken keeps its name, with the
// reference's message; names sort the renames.
func TestCleanupRenameWaitsForTheName(t *testing.T) {
	tool := hooktest.Tool(t, t.TempDir(), "config-tool-fake")
	hadDockerCmd(t, tool)
	code, log := do(t, tool, run{"[]", []hooktest.Response{{Stdout: "\n"}, {Stdout: "web-x1 web\nweb web\nb-2 b\n"}, {}},
		[][]string{psIDs, psNames, {"rename", "b-2", "b"}}})
	if code != 0 || !strings.Contains(log, `[INFO] Cannot rename "web-x1" since "web" still exists`+"\n") {
		t.Errorf("exit %d\n%s", code, log)
	}
}

// podman's ps has no .Label: the labels are read with index .Labels.
func TestCleanupPodmanFormats(t *testing.T) {
	tool := hooktest.Tool(t, t.TempDir(), "podman")
	hadDockerCmd(t, tool)
	do(t, tool, run{"[]", []hooktest.Response{{Stdout: "\n"}, {Stdout: "\n"}}, [][]string{
		{"ps", "-a", "--filter", "label=managed_by=docker-cmd", "--format", `{{index .Labels "config_id"}}`},
		{"ps", "-a", "--format", `{{.Names}} {{index .Labels "container_name"}}`}}})
}

// No list, or one that is not JSON: a warning and nothing done, exit 0.
// JSON that is not a list of deployments: exit 1 and nothing removed.
// A failing rm is logged with its stderr.
func TestCleanupLists(t *testing.T) {
	tool := hooktest.Tool(t, t.TempDir(), "config-tool-fake")
	hadDockerCmd(t, tool)
	for _, tc := range []struct {
		list string
		code int
		log  string
	}{
		{"", 0, "[WARNING] No config file "},
		{"[{", 0, "[WARNING] Could not load config json: Expecting property name enclosed in double quotes: line 1 column 3 (char 2)\n"},
		{`{"id": "x"}`, 1, "[ERROR] "},
		{`[{"id": "x"}]`, 1, "deployment 0 has no group; no container removed\n"},
		{`[{"group": "docker-cmd", "id": 1}]`, 1, "docker-cmd deployment 0 has no string id; no container removed\n"},
	} {
		code, log := do(t, tool, run{list: tc.list})
		if code != tc.code || !strings.Contains(log, tc.log) {
			t.Errorf("%q: exit %d, log %s", tc.list, code, log)
		}
	}
	code, log := do(t, tool, run{`[{"group": "script", "id": "s"}]`,
		[]hooktest.Response{{Stdout: "abc123\n"}, {Stdout: "111\n"}, {Stderr: "no such container", Returncode: 1}, {}},
		[][]string{psIDs, psABC, {"rm", "-f", "111"}, psNames}})
	if code != 0 || !strings.Contains(log, "[ERROR] Error removing container: 111\n") || !strings.Contains(log, "[ERROR] b'no such container'\n") {
		t.Errorf("exit %d\n%s", code, log)
	}
}

// A node without the container command (most nodes that have the
// package) has nothing to clean up, and says nothing.
func TestCleanupNoContainerCommandIsQuiet(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "heat-config")
	if err := os.WriteFile(list, []byte("["+deployment("x")+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err := hooks.RunScript(context.Background(), dockercmd.Cleanup, nil, hooks.Env{Stderr: &stderr, Environ: []string{
		"PATH=" + dir, dockercmd.CmdVar + "=docker", hooks.DeploymentsVar + "=" + list}})
	if err != nil || stderr.Len() != 0 {
		t.Errorf("without docker: %v, log %q; want success and no log", err, stderr.String())
	}
}

// A node that has never had a docker-cmd deployment has no container of
// one to remove or rename: the script runs no container command (the
// reference ran two `ps` on every pass, each logging "Cannot connect to
// the Docker daemon" where docker is installed and not running) and
// says nothing.
func TestCleanupWithoutDockerCmdDeploymentsRunsNothing(t *testing.T) {
	for _, list := range []string{"[]", `[{"id": "s", "group": "script"}, {"id": "p", "group": "puppet"}]`} {
		tool := hooktest.Tool(t, t.TempDir(), "config-tool-fake")
		code, log := do(t, tool, run{list: list})
		if code != 0 || log != "" {
			t.Errorf("%s: exit %d, log %q", list, code, log)
		}
		if _, err := os.Stat(seenFile(tool)); err == nil {
			t.Errorf("%s: noted a docker-cmd deployment", list)
		}
	}
}

// Once the list has had a docker-cmd deployment, the script notes it, so
// that it removes the containers after the last such deployment is gone;
// a note it cannot write is a warning, and the cleanup still runs.
func TestCleanupRemembersDockerCmdDeployments(t *testing.T) {
	tool := hooktest.Tool(t, t.TempDir(), "config-tool-fake")
	do(t, tool, run{"[" + deployment("abc123") + "]", []hooktest.Response{{Stdout: "\n"}, {Stdout: "\n"}}, [][]string{psIDs, psNames}})
	note, err := os.ReadFile(seenFile(tool))
	if err != nil || !strings.Contains(string(note), "docker-cmd") {
		t.Fatalf("note %q (%v)", note, err)
	}
	if code, log := do(t, tool, run{`[{"id": "s", "group": "script"}]`, append(slices.Clone(three), hooktest.Response{Stdout: "\n"}), removed}); code != 0 {
		t.Errorf("exit %d\n%s", code, log)
	}

	tool = hooktest.Tool(t, t.TempDir(), "config-tool-fake")
	os.WriteFile(filepath.Join(filepath.Dir(tool), "file"), nil, 0o600)
	dir := t.TempDir()
	list := filepath.Join(dir, "heat-config")
	os.WriteFile(list, []byte("["+deployment("abc123")+"]"), 0o600)
	state := filepath.Join(dir, "test_state.json")
	var stderr bytes.Buffer
	unwritable := filepath.Join(filepath.Dir(tool), "file", "docker-cmd.seen")
	err = hooks.RunScript(context.Background(), dockercmd.Cleanup, nil, hooks.Env{Stderr: &stderr, Environ: hooktest.Environ(t, filepath.Dir(tool), state,
		[]hooktest.Response{{Stdout: "\n"}, {Stdout: "\n"}}, dockercmd.CmdVar+"="+tool, hooks.DeploymentsVar+"="+list, dockercmd.SeenVar+"="+unwritable)})
	if err != nil || hooktest.Calls(state) != 2 || !strings.Contains(stderr.String(), "[WARNING] Could not note that this node has docker-cmd deployments ("+unwritable+": ") {
		t.Errorf("unwritable note: %v, %d calls\n%s", err, hooktest.Calls(state), stderr.String())
	}
}
