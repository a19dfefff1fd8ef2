package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/difftest"
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

// os-apply-config runs under a soft memory limit unless the operator tuned
// the collector through the environment.
func TestApplyConfigMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, applyConfigMemoryLimit},
		{map[string]string{"GOGC": "200"}, math.MaxInt64},
		{map[string]string{"GOMEMLIMIT": "64MiB"}, math.MaxInt64},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		limitApplyConfigMemory(func(k string) string { return tc.env[k] })
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("env %v: memory limit %d, want %d", tc.env, got, tc.want)
		}
	}
}
