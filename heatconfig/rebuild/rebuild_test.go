package rebuild

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/internal/testkit/lockedbuf"
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

// The state directory has one writer at a time: while 55-heat-config
// holds its lock, the rebuild says it waits and writes nothing; it
// marks the deployments once the lock is free, or, stopped while it
// waits, leaves the directory as it was.
func TestWaitsForTheStateDirectoryLock(t *testing.T) {
	bin := agent.Dir(t)
	for _, release := range []string{"unlock", "stop"} {
		t.Run(release, func(t *testing.T) {
			root := t.TempDir()
			md := filepath.Join(root, "md.json")
			os.WriteFile(md, []byte(`{"deployments": [{"id": "a", "group": "script", "inputs": []}]}`), 0o600)
			dir := deployed.Dir(filepath.Join(root, "var/lib/heat-config/deployed"))
			os.MkdirAll(dir.String(), 0o700)
			lock, err := dir.Lock(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Unlock()
			var out, errOut lockedbuf.Buffer
			env := Env{Stdout: &out, Stderr: &errOut, Root: root, Environ: []string{"PATH=" + bin, "OS_CONFIG_FILES=" + md}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Run(ctx, nil, env) }()
			for !strings.Contains(errOut.String(), "Waiting for another heat-config run to finish ("+dir.String()+")\n") {
				select {
				case err := <-done:
					t.Fatalf("ended while another run held the lock (%v)\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
				case <-time.After(10 * time.Millisecond):
				}
			}
			if dir.Deployed("a") {
				t.Fatal("a was marked while another run held the lock")
			}
			if release == "unlock" {
				lock.Unlock()
			} else {
				cancel()
			}
			err = <-done
			if release == "unlock" && (err != nil || !dir.Deployed("a")) {
				t.Errorf("after the lock was freed: %v, a marked %v\n%s", err, dir.Deployed("a"), errOut.String())
			}
			if release == "stop" && (exitcode.Of(err) != exitcode.Terminated || dir.Deployed("a") ||
				!strings.HasSuffix(errOut.String(), "heat-config-rebuild-deployed: stopped while waiting for the lock on "+dir.String()+"; nothing marked\n")) {
				t.Errorf("stopped while waiting: exit %d, a marked %v\n%s", exitcode.Of(err), dir.Deployed("a"), errOut.String())
			}
		})
	}
}

// An error that stops the run is one line on stderr, named after the
// program (it used to exit 1 without a word).
func TestErrorIsOneLine(t *testing.T) {
	bin := agent.Dir(t)
	root := t.TempDir()
	md := filepath.Join(root, "md.json")
	os.WriteFile(md, []byte(`{"deployments": {"id": "a"}}`), 0o600)
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Root: root, Environ: []string{"PATH=" + bin, "OS_CONFIG_FILES=" + md}}
	err := Run(context.Background(), nil, env)
	if exitcode.Of(err) != exitcode.Failure || !strings.HasPrefix(errOut.String(), "heat-config-rebuild-deployed: the deployments key: ") ||
		strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q", exitcode.Of(err), errOut.String())
	}
}
