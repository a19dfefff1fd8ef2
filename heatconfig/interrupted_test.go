package heatconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/heatconfig/deployed"
)

// A run cut short (SIGKILL, a power cut) leaves the deployment's
// in-flight marker beside its state file. The next run does not run it
// again; it sends the signal that never went: the hook's own result if it
// had finished, else a failure. Without a marker, a state file is a
// finished deployment, as for the reference (and heat-config-rebuild-deployed).
func TestInterruptedDeploymentIsSignalledNotRerun(t *testing.T) {
	for _, c := range []struct {
		name         string
		marker       bool
		notifyJSON   string // what the cut-short run wrote, "" none
		wantSignal   bool
		wantCode     string
		wantInStderr string
	}{
		{"killed while the hook ran", true, "", true, "137", "interrupted"},
		{"killed before the signal went", true, `{"deploy_stdout": "done", "deploy_stderr": "", "deploy_status_code": 0}`, true, "0", ""},
		{"signal data unreadable", true, `{"deploy_st`, true, "137", "interrupted"},
		{"finished (no marker)", false, `{"deploy_status_code": 0}`, false, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newNode(t)
			n.hook("script", `echo ran >> "$NODE/runs"`)
			n.deployments(dep("d1", "script"))
			if err := os.MkdirAll(n.deployed, 0o700); err != nil {
				t.Fatal(err)
			}
			write := func(name, body string) {
				if err := os.WriteFile(filepath.Join(n.deployed, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("d1.json", "{}")
			if c.marker {
				write("d1"+deployed.InflightSuffix, "")
			}
			if c.notifyJSON != "" {
				write("d1.notify.json", c.notifyJSON)
			}
			if err := n.run(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(n.dir, "runs")); err == nil {
				t.Errorf("the deployment ran again")
			}
			if _, err := os.Stat(filepath.Join(n.deployed, "d1"+deployed.InflightSuffix)); err == nil {
				t.Errorf("the in-flight marker is still there")
			}
			if !c.wantSignal {
				if len(n.notified()) != 0 {
					t.Errorf("signalled %v", n.notified())
				}
				return
			}
			s := signalOf(t, n, "d1")
			if got := field(s, "deploy_status_code"); got != c.wantCode {
				t.Errorf("deploy_status_code %s, want %s", got, c.wantCode)
			}
			if !strings.Contains(field(s, "deploy_stderr"), c.wantInStderr) {
				t.Errorf("deploy_stderr %q, want %q in it", field(s, "deploy_stderr"), c.wantInStderr)
			}
		})
	}
}

// A run that finishes leaves no marker behind; a new deployment gets one
// only while it runs.
func TestInflightMarkerOnlyWhileRunning(t *testing.T) {
	n := newNode(t)
	n.hook("script", `ls "$DEPLOYED" > "$NODE/during"`)
	n.extraEnv = append(n.extraEnv, "DEPLOYED="+n.deployed)
	n.deployments(dep("d1", "script"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	during, _ := os.ReadFile(filepath.Join(n.dir, "during"))
	if !strings.Contains(string(during), "d1"+deployed.InflightSuffix) || !strings.Contains(string(during), "d1.json") {
		t.Errorf("while the hook ran the state directory held %q, want the state file and the marker", during)
	}
	if _, err := os.Stat(filepath.Join(n.deployed, "d1"+deployed.InflightSuffix)); err == nil {
		t.Errorf("the marker outlived the run")
	}
	if _, ok := n.notified()["d1"]; !ok {
		t.Errorf("not signalled")
	}
}

// A run killed while it wrote the state file leaves it empty or cut
// short; heat-config-notify reads the signal's address from it, so the
// next run puts the deployment's document back before it signals.
func TestTornStateFileIsRewrittenBeforeItsSignal(t *testing.T) {
	for _, torn := range []string{"", "{\n  \"config\": \"#!/bin/sh"} {
		n := newNode(t)
		n.hook("script", `echo ran >> "$NODE/runs"`)
		n.deployments(dep("d1", "script"))
		if err := os.MkdirAll(n.deployed, 0o700); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(n.deployed, "d1.json")
		for path, body := range map[string]string{state: torn, filepath.Join(n.deployed, "d1"+deployed.InflightSuffix): ""} {
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.run(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(n.dir, "runs")); err == nil {
			t.Errorf("torn %q: the deployment ran again", torn)
		}
		b, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil || doc["id"] != "d1" {
			t.Errorf("torn %q: state file after the run %q (%v), want the deployment", torn, b, err)
		}
		if got := field(signalOf(t, n, "d1"), "deploy_status_code"); got != "137" {
			t.Errorf("torn %q: deploy_status_code %s, want 137", torn, got)
		}
		if m, _ := filepath.Glob(filepath.Join(n.deployed, ".d1.json.*")); len(m) > 0 {
			t.Errorf("torn %q: staged files left: %v", torn, m)
		}
	}
}

// A run killed between writing a deployment's signal data, signal record
// or rewritten state file and renaming it into place leaves the staged
// file; the next run removes it, whatever deployment it was for, and
// nothing else.
func TestStagedFilesOfKilledRunsRemoved(t *testing.T) {
	n := newNode(t)
	n.hook("script", "true")
	n.deployments(dep("d1", "script"))
	os.MkdirAll(n.deployed, 0o700)
	left := []string{".d0.notify.json.123", ".d0.signal.json.4567", ".d0.json.89"}
	kept := []string{"d0.json", ".d0.json.tmp", "notes.txt"}
	for _, name := range append(left, kept...) {
		os.WriteFile(filepath.Join(n.deployed, name), []byte("{"), 0o600)
	}
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	for _, name := range left {
		if _, err := os.Stat(filepath.Join(n.deployed, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(n.deployed, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}
