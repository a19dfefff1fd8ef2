package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks/all"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// A daemon stopped by SIGTERM dies of it after stopping its command, as
// the Python program did: systemd counts that as a clean stop, while an
// exit status of 143 would leave the unit failed.
func TestDaemonDiesOfSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent; not run with -short")
	}
	dir := t.TempDir()
	if err := difftest.BuildAgent(dir, "os-collect-config"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "os-collect-config")
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
	marker := dir + "/got-term"
	cmd := exec.Command(bin, "--config-file", "/dev/null", "--cachedir", dir+"/cache", "--backup-cachedir", dir+"/backup",
		"--local-path", dir+"/local", "-c", "trap 'touch "+marker+"; exit 0' TERM; echo started > "+dir+"/started; sleep 30 & wait", "local")
	// Its pass record in the test's directory, not the machine's /run.
	cmd.Env = append(os.Environ(), agentstate.DirVar+"="+dir+"/status")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(dir + "/started"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("wait status %v (%v), want death by SIGTERM", ws, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the running command did not get SIGTERM first")
	}
}

// make install links every hook of the registry, and every program the
// binary answers to, under its name.
func TestMakefileLinksEveryProgram(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string][]string{}
	var name string
	for _, line := range strings.Split(string(mk), "\n") {
		if k, v, ok := strings.Cut(line, ":="); ok && !strings.HasPrefix(line, "\t") {
			name = strings.TrimSpace(k)
			line = v
		} else if name == "" || !strings.HasPrefix(line, " ") {
			name = ""
			continue
		}
		vars[name] = append(vars[name], strings.Fields(strings.TrimSuffix(line, "\\"))...)
		if !strings.HasSuffix(line, "\\") {
			name = ""
		}
	}
	var groups []string
	for _, h := range all.Hooks {
		groups = append(groups, h.Group)
	}
	if got := strings.Join(vars["HOOKS"], " "); got != strings.Join(groups, " ") {
		t.Errorf("Makefile HOOKS = %q, the registry has %q", got, strings.Join(groups, " "))
	}
	linked := map[string]bool{"tripleo-agent": true}
	for _, p := range vars["PROGRAMS"] {
		linked[p] = true
	}
	// os-refresh-config's scripts are links in the elements, which make
	// install copies.
	scripts, err := filepath.Glob("../../elements/*/os-refresh-config/*.d/*")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no os-refresh-config scripts in elements/ (%v)", err)
	}
	for _, s := range scripts {
		if target, err := os.Readlink(s); err != nil || target != "../../../bin/tripleo-agent" {
			t.Errorf("%s: want a link to ../../../bin/tripleo-agent, got %q (%v)", s, target, err)
		}
		linked[filepath.Base(s)] = true
	}
	for _, g := range groups {
		linked[g] = true
	}
	for _, p := range programs {
		if !linked[p.name] {
			t.Errorf("program %s has no link in the Makefile", p.name)
		}
	}
}
