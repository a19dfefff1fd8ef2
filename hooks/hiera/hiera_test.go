package hiera_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hiera"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, hiera.Hook) }

type fixture struct {
	datadir, conf, bin, state string
}

// setup gives a data dir that does not exist yet, a config file path in
// an existing directory, and a fake check command.
func setup(t *testing.T) *fixture {
	f := &fixture{datadir: filepath.Join(t.TempDir(), "hieradata"), conf: filepath.Join(t.TempDir(), "hiera.yaml"), bin: t.TempDir()}
	f.state = filepath.Join(t.TempDir(), "test_state.json")
	hooktest.Tool(t, f.bin, "check")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_HIERA_CONFIG=" + f.conf, "HEAT_PUPPET_HIERA_DATADIR=" + f.datadir,
		"HEAT_HIERA_ELEMENT_CHECK_CMD=check --key hiera.datafiles",
	}, vars...)...)
}

const data = `{"id": "test_hiera", "name": "fake_resource_name", "group": "hiera",
	"config": {"hierarchy": ["compute"], "datafiles": {"compute": {"foo": "bar"}}}}`

// test_hook_hiera.py::test_hook: the hiera configuration is exactly the
// reference's text, each data file is indented sorted JSON; the result is
// an empty success.
func TestHook(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, hiera.Hook, data, f.environ(t, hooktest.Response{Stdout: "empty\n"}))
	want := `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}`
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("exit %d, stdout %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	conf := "\n---\n:backends:\n  - json\n:json:\n  :datadir: " + f.datadir + "\n:hierarchy:\n  - compute\n"
	if got := hooktest.ReadFile(t, f.conf); got != conf || hooktest.Mode(t, f.conf) != 0o600 {
		t.Errorf("hiera.yaml %q mode %o\nwant %q", got, hooktest.Mode(t, f.conf), conf)
	}
	compute := filepath.Join(f.datadir, "compute.json")
	if got := hooktest.ReadFile(t, compute); got != "{\n    \"foo\": \"bar\"\n}" || hooktest.Mode(t, compute) != 0o600 {
		t.Errorf("compute.json %q mode %o", got, hooktest.Mode(t, compute))
	}
	if m := hooktest.Mode(t, f.datadir); m != 0o700 {
		t.Errorf("datadir mode %o", m)
	}
	if st := hooktest.ReadState(t, f.state, 0); !slices.Equal(st.Args, []string{"check", "--key", "hiera.datafiles"}) {
		t.Errorf("check argv %q", st.Args)
	}
}

// The legacy check: unless the command prints "empty" (trailing
// whitespace aside), the deployment fails with the reference's message
// and nothing is written; a command that cannot be run means no legacy
// data. (The reference crashed on its own result there: bytes in JSON.)
func TestLegacyHieradata(t *testing.T) {
	for _, tc := range []struct {
		name, check string
		resp        hooktest.Response
		want        string
	}{
		{"empty", "", hooktest.Response{Stdout: "empty \n"}, ""},
		{"legacy", "", hooktest.Response{Stdout: "{\"a\": 1}\n", Returncode: 0},
			`{"deploy_stdout": "{\"a\": 1}\n", "deploy_stderr": "Legacy hieradata from os-apply-config has been detected - {\"a\": 1}. Please update all of your interfaces to use the new heat-agents hiera hook before proceeding", "deploy_status_code": 1}`},
		{"failing check", "", hooktest.Response{Returncode: 1},
			`{"deploy_stdout": "", "deploy_stderr": "Legacy hieradata from os-apply-config has been detected - . Please update all of your interfaces to use the new heat-agents hiera hook before proceeding", "deploy_status_code": 1}`},
		{"no check command", "HEAT_HIERA_ELEMENT_CHECK_CMD=no-such-command --key x", hooktest.Response{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			var vars []string
			if tc.check != "" {
				vars = append(vars, tc.check)
			}
			r := hooktest.Run(t, hiera.Hook, data, f.environ(t, tc.resp, vars...))
			ok := `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}`
			if tc.want == "" {
				tc.want = ok
			}
			if r.Code != 0 || r.Stdout != tc.want {
				t.Errorf("exit %d\n got %s\nwant %s", r.Code, r.Stdout, tc.want)
			}
			_, err := os.Stat(f.conf)
			if written := err == nil; written != (tc.want == ok) {
				t.Errorf("hiera.yaml written: %v", written)
			}
		})
	}
}

// Without a hierarchy the configuration is left alone; data files are
// sorted and indented; several hierarchy levels keep their order and
// Python's str() of odd items.
func TestConfigShapes(t *testing.T) {
	f := setup(t)
	if err := os.WriteFile(f.conf, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := `{"id": "1", "group": "hiera", "inputs": [], "config": {"datafiles": {"b": {"z": 1, "a": [true, null]}, "a": {}}}}`
	hooktest.Run(t, hiera.Hook, d, f.environ(t, hooktest.Response{Stdout: "empty"}))
	if hooktest.ReadFile(t, f.conf) != "mine" {
		t.Error("hiera.yaml rewritten without a hierarchy")
	}
	if got := hooktest.ReadFile(t, filepath.Join(f.datadir, "b.json")); got != "{\n    \"a\": [\n        true,\n        null\n    ],\n    \"z\": 1\n}" {
		t.Errorf("b.json %q", got)
	}
	if got := hooktest.ReadFile(t, filepath.Join(f.datadir, "a.json")); got != "{}" {
		t.Errorf("a.json %q", got)
	}
	d = `{"id": "2", "group": "hiera", "inputs": [], "config": {"hierarchy": ["%{::uuid}", "heat_config_%{::deploy_config_name}", 1, true]}}`
	hooktest.Run(t, hiera.Hook, d, f.environ(t, hooktest.Response{Stdout: "empty"}))
	if got := hooktest.ReadFile(t, f.conf); !strings.HasSuffix(got, ":hierarchy:\n  - %{::uuid}\n  - heat_config_%{::deploy_config_name}\n  - 1\n  - True\n") {
		t.Errorf("hiera.yaml %q", got)
	}
}

// A null config writes nothing; a config of another shape fails the hook
// with a message (the reference crashed or iterated characters).
func TestUnusableConfig(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, hiera.Hook, `{"id": "1", "group": "hiera", "config": null}`, f.environ(t, hooktest.Response{Stdout: "empty"}))
	if r.Code != 0 || r.JSON(t)["deploy_status_code"] != 0.0 {
		t.Errorf("null config: exit %d %s", r.Code, r.Stdout)
	}
	for _, config := range []string{`"text"`, `{"hierarchy": "compute"}`, `{"datafiles": []}`} {
		r := hooktest.Run(t, hiera.Hook, `{"id": "1", "group": "hiera", "config": `+config+`}`, f.environ(t, hooktest.Response{Stdout: "empty"}))
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "[ERROR] unusable config: ") {
			t.Errorf("config %s: exit %d, stdout %q, log %s", config, r.Code, r.Stdout, r.Stderr)
		}
	}
}
