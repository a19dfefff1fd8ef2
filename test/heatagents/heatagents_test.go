// Package heatagents runs openstack/heat-agents' own subprocess tests
// against our installed tree (scripts/heat-agents-tests.sh) when
// HEAT_AGENTS names a checkout of heat-agents; CI opts in by setting it.
package heatagents

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const script = "../../scripts/heat-agents-tests.sh"

// checkout is HEAT_AGENTS, or a skip.
func checkout(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs make install and heat-agents' Python tests")
	}
	dir := os.Getenv("HEAT_AGENTS")
	if dir == "" {
		t.Skip("HEAT_AGENTS is not set (a checkout of openstack/heat-agents)")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func run(t *testing.T, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("%s\n%s", strings.Join(env, " "), out.String())
	return out.String(), err
}

// row is a module's line of the table: its passed and failed counts.
var row = regexp.MustCompile(`(?m)^(test_\w+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+$`)

// Every module whose program is in our tree passes, but the rows the
// known list names; the modules of the hooks we ship, 55-heat-config's,
// the os-refresh-config scripts' and heat-config-notify's run at least
// one test each.
func TestHeatAgentsOwnTests(t *testing.T) {
	dir := checkout(t)
	out, err := run(t, "HEAT_AGENTS="+dir)
	if err != nil {
		t.Fatalf("heat-agents-tests.sh: %v", err)
	}
	ran := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		ran[m[1]] = m[2] != "0"
	}
	for _, m := range []string{"test_heat_config", "test_heat_config_notify", "test_hook_script", "test_hook_puppet",
		"test_hook_ansible", "test_hook_hiera", "test_hook_json_file", "test_hook_apply_config", "test_hook_cfn_init",
		"test_hook_docker_cmd", "test_hook_docker_compose", "test_heat_config_docker_compose", "test_heat_config_kubelet"} {
		if !ran[m] {
			t.Errorf("%s: no test passed", m)
		}
	}
}

// The runner fails when our program is wrong: a json-file hook that
// writes nothing fails test_hook_json_file.
func TestHeatAgentsCatchesABrokenHook(t *testing.T) {
	dir := checkout(t)
	root := t.TempDir()
	cmd := exec.Command("make", "-s", "-C", "../..", "install", "DESTDIR="+root, "PREFIX=/usr", "BIN="+root+"/.bin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	hook := filepath.Join(root, "usr/libexec/heat-config/hooks/json-file")
	os.Remove(hook)
	fake := "#!/bin/sh\ncat >/dev/null\necho '{\"deploy_stdout\": \"\", \"deploy_stderr\": \"\", \"deploy_status_code\": 0}'\n"
	if err := os.WriteFile(hook, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "HEAT_AGENTS="+dir, "AGENT_ROOT="+root, "MODULES=test_hook_json_file")
	if err == nil {
		t.Fatal("heat-agents-tests.sh passed with a json-file hook that writes nothing")
	}
	if !strings.Contains(out, "FAIL test_hook_json_file.") {
		t.Errorf("no FAIL line for test_hook_json_file")
	}
}
