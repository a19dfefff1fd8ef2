package applyconfig_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/applyconfig"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

func TestMain(m *testing.M) { hooktest.Main(m, applyconfig.Hook) }

const data = `{"id": "test_apply_config", "name": "fake_resource_name", "group": "apply-config", "config": {"foo": "bar"}}`

// The command is os-apply-config from PATH (or HEAT_APPLY_CONFIG_CMD),
// alone on its command line, with the hook's environment; its output and
// status are the result.
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		resp      hooktest.Response
		want      string
	}{
		{"default", "", hooktest.Response{Stdout: "out", Stderr: "err"},
			`{"deploy_stdout": "out", "deploy_stderr": "err", "deploy_status_code": 0}`},
		{"failed", "", hooktest.Response{Stderr: "bad", Returncode: 1},
			`{"deploy_stdout": "", "deploy_stderr": "bad", "deploy_status_code": 1}`},
		{"HEAT_APPLY_CONFIG_CMD", "my-apply", hooktest.Response{}, `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}`},
		{"not installed", "no-such-apply", hooktest.Response{},
			`{"deploy_stdout": "", "deploy_stderr": "no-such-apply: command not found", "deploy_status_code": 127}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
			hooktest.Tool(t, bin, "os-apply-config")
			hooktest.Tool(t, bin, "my-apply")
			vars := []string{"OS_CONFIG_FILES=/a.json:/b.json"}
			if tc.cmd != "" {
				vars = append(vars, "HEAT_APPLY_CONFIG_CMD="+tc.cmd)
			}
			r := hooktest.Run(t, applyconfig.Hook, data, hooktest.Environ(t, bin, state, tc.resp, vars...))
			if r.Code != 0 || r.Stdout != tc.want {
				t.Fatalf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, tc.want, r.Stderr)
			}
			if tc.name == "not installed" {
				return
			}
			st := hooktest.ReadState(t, state, 0)
			if !slices.Equal(st.Args, []string{cmp.Or(tc.cmd, "os-apply-config")}) || st.Env["OS_CONFIG_FILES"] != "/a.json:/b.json" || st.Stdin != "" {
				t.Errorf("argv %q, env %v, stdin %q", st.Args, st.Env, st.Stdin)
			}
		})
	}
}

// test_hook_apply_config.py::test_hook, with our own os-apply-config: the
// collected metadata (OS_CONFIG_FILES) renders the templates
// (OS_CONFIG_APPLIER_TEMPLATES), here into a file under the test's
// directory (the reference's test wrote into /tmp).
func TestHookWithOurApplyConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent")
	}
	bin, work := t.TempDir(), t.TempDir()
	if err := difftest.BuildAgent(bin, "os-apply-config"); err != nil {
		t.Fatal(err)
	}
	metadata := filepath.Join(work, "metadata.json")
	if err := os.WriteFile(metadata, []byte(`{"foo": "bar"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	templates := filepath.Join(work, "templates")
	out := filepath.Join(work, "out", "rendered")
	tmpl := filepath.Join(templates, out)
	if err := os.MkdirAll(filepath.Dir(tmpl), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmpl, []byte("foo={{foo}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := hooktest.Run(t, applyconfig.Hook, data, []string{
		"PATH=" + bin + ":/usr/bin:/bin",
		"OS_CONFIG_FILES=" + metadata, "OS_CONFIG_APPLIER_TEMPLATES=" + templates,
	})
	res := r.JSON(t)
	if r.Code != 0 || res["deploy_status_code"] != 0.0 || res["deploy_stdout"] != "" {
		t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := hooktest.ReadFile(t, out); got != "foo=bar" {
		t.Errorf("rendered %q", got)
	}
	if !strings.Contains(r.Stderr, "[INFO] Completed apply-config.\n") {
		t.Errorf("log %s", r.Stderr)
	}
}
