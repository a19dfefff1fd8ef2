package ansible_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/ansible"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

const playbook = `- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - copy:
        content: "{{ message }}\n"
        dest: "{{ target }}"
    - copy:
        content: "wrote {{ target }} for {{ heat_config_id }}"
        dest: "{{ heat_outputs_path }}.result"
`

// A real ansible-playbook on a local connection through the hook: the
// play writes a file from an extra variable (an input) and the output
// file.
func TestRealAnsible(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ansible-playbook (seconds)")
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Skip("ansible-playbook is not installed: the test of a real playbook run is skipped")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	p, _ := json.Marshal(playbook)
	d := `{"id": "real-1", "name": "real", "group": "ansible", "options": {},
	"inputs": [{"name": "target", "value": "` + target + `"}, {"name": "message", "value": "hello from heat"}],
	"outputs": [{"name": "result"}], "config": ` + string(p) + `}`
	env := append(os.Environ(),
		"HEAT_ANSIBLE_WORKING="+filepath.Join(dir, "w"), "HEAT_ANSIBLE_OUTPUTS="+filepath.Join(dir, "o"),
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"), "ANSIBLE_NOCOLOR=1")
	r := hooktest.Run(t, ansible.Hook, d, env)
	res := r.JSON(t)
	if r.Code != 0 || res["deploy_status_code"] != 0.0 {
		t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := hooktest.ReadFile(t, target); got != "hello from heat\n" {
		t.Errorf("target %q", got)
	}
	if res["result"] != "wrote "+target+" for real-1" {
		t.Errorf("output result %q", res["result"])
	}
	if out, _ := res["deploy_stdout"].(string); !strings.Contains(out, "PLAY RECAP") {
		t.Errorf("deploy_stdout %q", out)
	}
}
