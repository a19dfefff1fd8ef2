package kubelet_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/kubelet"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// The reference test's deployments.
const deployments = `[{"id": "abcdef001", "group": "kubelet", "name": "mysql", "config": {"version": "v1beta2", "volumes": [{"name": "mariadb-data"}],
  "containers": [{"image": "mariadb_image", "volumeMounts": [{"mountPath": "/var/lib/mysql", "name": "mariadb-data"}], "name": "mariadb",
  "env": [{"name": "DB_ROOT_PASSWORD", "value": "mariadb_password"}], "ports": [{"containerPort": 3306}]}]}},
 {"id": "abcdef002", "group": "kubelet", "name": "rabbitmq", "config": {"version": "v1beta2",
  "containers": [{"image": "rabbitmq_image", "name": "rabbitmq", "ports": [{"containerPort": 5672}]}]}},
 {"id": "abcdef003", "group": "kubelet", "name": "heat_api_engine", "config": {"version": "v1beta2", "containers": [
  {"image": "heat_engine_image", "name": "heat-engine", "env": [{"name": "DB_ROOT_PASSWORD", "value": "mariadb_password"},
   {"name": "HEAT_DB_PASSWORD", "value": "heatdb_password"}, {"name": "HEAT_KEYSTONE_PASSWORD", "value": "password"}]},
  {"image": "heat_api_image", "name": "heat-api", "ports": [{"containerPort": 8004}]}]}},
 {"id": "script1", "group": "script", "config": "echo"}]`

func runConfigure(t *testing.T, dir, list string) (int, string) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "heat-config")
	if list != "" {
		write(t, conf, list)
	}
	var log strings.Builder
	env := hooks.Env{Environ: []string{kubelet.ManifestsVar + "=" + dir, kubelet.ConfigVar + "=" + conf}, Log: hooktest.Logger(&log)}
	return exitcode.Of(hooks.RunScript(context.Background(), kubelet.Configure, nil, env)), log.String()
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// test_heat_config_kubelet.py: test_run_heat_config. Each kubelet
// deployment's pod is <manifests>/<id>.json (json.dump indent=2, 0600);
// the fake hook file the reference test leaves there stays; stale
// manifests go; a manifest is replaced whole.
func TestConfigure(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kubelet"), "#!/bin/sh\n")
	write(t, filepath.Join(dir, "stale.json"), "{}")
	write(t, filepath.Join(dir, "abcdef001.json"), strings.Repeat("old ", 1000))
	if code, log := runConfigure(t, dir, deployments); code != 0 {
		t.Fatalf("exit %d: %s", code, log)
	}
	list, _ := jsondoc.Loads([]byte(deployments))
	for _, item := range list.([]jsondoc.Value)[:3] {
		o := item.(*jsondoc.Object)
		id, _ := o.Get("id")
		config, _ := o.Get("config")
		p := filepath.Join(dir, id.(string)+".json")
		got := hooktest.ReadFile(t, p)
		if got != jsondoc.DumpsIndent(config, 2) || hooktest.Mode(t, p) != 0o600 {
			t.Errorf("%s: %q mode %o", p, got, hooktest.Mode(t, p))
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "abcdef001.json abcdef002.json abcdef003.json kubelet" {
		t.Errorf("manifests directory: %q", names)
	}
	if got := hooktest.ReadFile(t, filepath.Join(dir, "abcdef002.json")); !strings.HasPrefix(got, "{\n  \"version\": \"v1beta2\",\n  \"containers\": [\n    {\n") {
		t.Errorf("format %q", got)
	}
}

// No deployments file is an error (status 1), as in the reference; so is
// one that is not a JSON list, where the reference removed every
// manifest and stopped every pod: ours are left as they are. A
// deployment with an unsafe id is logged and skipped.
func TestConfigureErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p.json"), "{}")
	for _, tc := range []struct{ list, log string }{{"", "[ERROR] No config file "}, {"[", "the manifests are left as they are"}} {
		code, log := runConfigure(t, dir, tc.list)
		if code != 1 || !strings.Contains(log, tc.log) || hooktest.ReadFile(t, filepath.Join(dir, "p.json")) != "{}" {
			t.Errorf("%q: exit %d, log %s", tc.list, code, log)
		}
	}
	code, log := runConfigure(t, dir, `[{"id": "../x", "group": "kubelet", "config": {}}, {"id": "p", "group": "kubelet"}]`)
	if code != 0 || !strings.Contains(log, "holds a slash") || !strings.Contains(log, "has no config") || hooktest.ReadFile(t, filepath.Join(dir, "p.json")) != "{}" {
		t.Errorf("exit %d, log %s", code, log)
	}
}

// Without kubelet deployments nothing is left behind: make install lays
// the script out on every node.
func TestConfigureWithoutPodsLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	if code, log := runConfigure(t, dir, `[{"id": "1", "group": "script"}]`); code != 0 {
		t.Errorf("exit %d, log %s", code, log)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the manifests directory was made")
	}
}
