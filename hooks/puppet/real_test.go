package puppet_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/puppet"
)

// A real `puppet apply` through the hook: the manifest writes a file from
// an input (a FACTER_ fact) and the output file, and --detailed-exitcodes'
// 2 (changes applied) is a success.
func TestRealPuppet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs puppet (seconds)")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Skip("puppet is not installed: the test of a real puppet apply is skipped")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	manifest := `file { $::target: content => "${::message}\n" }
file { "${::heat_outputs_path}.result": content => "wrote ${::target}" }
`
	m, _ := json.Marshal(manifest)
	d := `{"id": "real-1", "creation_time": "2026-01-02T03:04:05Z", "name": "real", "group": "puppet", "options": null,
	"inputs": [{"name": "target", "value": "` + target + `"}, {"name": "message", "value": "hello from heat"}],
	"outputs": [{"name": "result"}], "config": ` + string(m) + `}`
	env := append(os.Environ(),
		"HEAT_PUPPET_WORKING="+filepath.Join(dir, "w"), "HEAT_PUPPET_OUTPUTS="+filepath.Join(dir, "o"),
		"HEAT_PUPPET_LOGDIR="+filepath.Join(dir, "logs"), "HEAT_PUPPET_HIERA_DATADIR="+filepath.Join(dir, "hiera"))
	r := hooktest.Run(t, puppet.Hook, d, env)
	res := r.JSON(t)
	if r.Code != 0 || res["deploy_status_code"] != 0.0 {
		t.Fatalf("exit %d, result %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := hooktest.ReadFile(t, target); got != "hello from heat\n" {
		t.Errorf("target %q", got)
	}
	if res["result"] != "wrote "+target {
		t.Errorf("output result %q", res["result"])
	}
	if got := hooktest.ReadFile(t, filepath.Join(dir, "logs", "2026-01-02-03-04-05Z-real-1-stdout.log")); got != res["deploy_stdout"] {
		t.Errorf("stdout log %q, deploy_stdout %q", got, res["deploy_stdout"])
	}
}
