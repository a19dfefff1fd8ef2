package all_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/all"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

// The registry holds the reference's hook groups, each once, in order.
func TestHooks(t *testing.T) {
	var groups []string
	for _, h := range all.Hooks {
		if h.Run == nil {
			t.Errorf("%s: no Run", h.Group)
		}
		groups = append(groups, h.Group)
	}
	want := []string{"script", "puppet", "ansible", "hiera", "json-file", "apply-config", "cfn-init", "docker-cmd", "docker-compose", "kubelet", "salt", "chef"}
	if !slices.Equal(groups, want) {
		t.Errorf("groups %q, want %q", groups, want)
	}
}

// Every hook refuses hostile or broken stdin the same way, before doing
// anything: one ERROR line, exit status 1, nothing on stdout.
func TestEveryHookRefusesBadStdin(t *testing.T) {
	for _, h := range all.Hooks {
		for _, stdin := range []string{"", "not json", `{"id": "../../etc/passwd", "group": "x", "inputs": []}`, strings.Repeat(`{"a":`, 50000)} {
			// A working directory that must stay empty.
			dir := t.TempDir()
			env := []string{"PATH=/nonexistent"}
			for _, v := range []string{"HEAT_SCRIPT_WORKING", "HEAT_PUPPET_WORKING", "HEAT_ANSIBLE_WORKING", "HEAT_PUPPET_HIERA_DATADIR",
				"HEAT_CFN_INIT_LAST_METADATA_DIR", "HEAT_DOCKER_COMPOSE_WORKING", "HEAT_SALT_WORKING", "HEAT_CHEF_WORKING", "HEAT_CHEF_OUTPUTS"} {
				env = append(env, v+"="+dir+"/x")
			}
			r := hooktest.Run(t, h, stdin, env)
			if r.Code != 1 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "("+hooks.LoggerName+") [ERROR] invalid deployment") {
				t.Errorf("%s, stdin %.30q: exit %d, stdout %q, stderr %q", h.Group, stdin, r.Code, r.Stdout, r.Stderr)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%s: wrote %v", h.Group, left)
			}
		}
	}
}

// The hooks whose reference never reads the deployment's id take one
// without (heat-agents' tests of cfn-init and docker-compose send none);
// script, puppet and ansible name their files after it and refuse.
// Groups not listed are not checked.
func TestIDOptional(t *testing.T) {
	want := map[string]bool{
		"json-file": true, "hiera": true, "apply-config": true, "cfn-init": true, "docker-compose": true,
		"script": false, "puppet": false, "ansible": false,
	}
	for _, h := range all.Hooks {
		if w, ok := want[h.Group]; ok && h.IDOptional != w {
			t.Errorf("%s: IDOptional %v, want %v", h.Group, h.IDOptional, w)
		}
	}
}
