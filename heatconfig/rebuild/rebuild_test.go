package rebuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// agent is our os-apply-config: the program reads the deployments
// through it, as the reference does.
var agent = difftest.NewSharedAgent("os-apply-config")

func TestMain(m *testing.M) {
	code := m.Run()
	agent.Remove()
	os.Exit(code)
}

// Every deployment a hook would run is marked deployed; os-apply-config
// and Heat::Ungrouped ones are not (heat-config never runs them); marks
// that exist are left as they are.
func TestMarksDeploymentsAsDeployed(t *testing.T) {
	bin := agent.Dir(t)
	root := t.TempDir()
	md := filepath.Join(root, "md.json")
	os.WriteFile(md, []byte(`{"deployments": [`+
		`{"id": "a", "group": "script", "inputs": []}, {"id": "b", "group": "os-apply-config", "inputs": []}, `+
		`{"id": "c", "group": "Heat::Ungrouped", "inputs": []}, {"id": "d", "group": "puppet", "inputs": []}]}`), 0o600)
	current := filepath.Join(root, "var/lib/heat-config/deployed")
	os.MkdirAll(current, 0o700)
	os.WriteFile(filepath.Join(current, "d.json"), []byte("kept"), 0o600)
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Root: root, Environ: []string{"PATH=" + bin, "OS_CONFIG_FILES=" + md}}
	if err := Run(context.Background(), nil, env); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	want := "Reading deployments via os-apply-config\nFound 4 deployments.\n" +
		"Creating " + current + "/a.json so that deployment will not be re-run\n" +
		"Skipping creating deployed file for deployment b as it is group:os-apply-config\n" +
		"Skipping creating deployed file for deployment c as it is group:Heat::Ungrouped\n" +
		"Creating " + current + "/d.json so that deployment will not be re-run\n"
	if out.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), want)
	}
	entries, _ := os.ReadDir(current)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "a.json d.json" {
		t.Errorf("marks: %v", names)
	}
	if b, _ := os.ReadFile(filepath.Join(current, "d.json")); string(b) != "kept" {
		t.Errorf("an existing mark was rewritten: %q", b)
	}
}

// Without the current state directory the legacy one is used, as by the
// reference (heat-config migrates it); a hostile id is refused.
func TestLegacyDirAndHostileIDs(t *testing.T) {
	bin := agent.Dir(t)
	root := t.TempDir()
	md := filepath.Join(root, "md.json")
	os.WriteFile(md, []byte(`{"deployments": [{"id": "../../x", "group": "script", "inputs": []}, {"id": "ok", "group": "script", "inputs": []}]}`), 0o600)
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Root: root, Environ: []string{"PATH=" + bin, "OS_CONFIG_FILES=" + md}}
	if err := Run(context.Background(), nil, env); err == nil {
		t.Error("a hostile id did not fail the run")
	}
	if _, err := os.Stat(filepath.Join(root, "var/run/heat-config/deployed/ok.json")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(errOut.String(), `Skipping deployment 0 '../../x': invalid deployment: id "../../x" holds a slash`) {
		t.Errorf("stderr: %s", errOut.String())
	}
	if _, err := os.Stat(filepath.Join(root, "var/run/x.json")); err == nil {
		t.Error("a file was written outside the state directory")
	}
}
