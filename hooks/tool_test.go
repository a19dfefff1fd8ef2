package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

// script writes an executable file in dir.
func script(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func toolEnv(log *strings.Builder, vars ...string) hooks.Env {
	return hooks.Env{Environ: vars, Grace: time.Second, Log: hooktest.Logger(log)}
}

// Tools are found in the PATH of the environment they get, as Python's
// subprocess does, and run with it; their status is Python's returncode.
func TestRunToolFindsToolsInItsPATH(t *testing.T) {
	bin := t.TempDir()
	script(t, bin, "tool", "#!/bin/sh\necho \"out $1 $GREETING\"\necho err >&2\nexit 3\n", 0o755)
	var log strings.Builder
	env := toolEnv(&log, "PATH=/nowhere")
	o := env.RunTool(context.Background(), hooks.Tool{
		Argv: []string{"tool", "arg"}, Env: []string{"PATH=/usr/bin:/bin:" + bin, "GREETING=hi"},
	})
	if o.Stdout != "out arg hi\n" || o.Stderr != "err\n" || o.Status != 3 || !o.Ran || o.Note != "" {
		t.Errorf("outcome %+v", o)
	}
	o = env.RunTool(context.Background(), hooks.Tool{Argv: []string{"sh", "-c", "kill -9 $$"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if o.Status != -9 {
		t.Errorf("killed by SIGKILL: status %d, want -9 (Python's returncode)", o.Status)
	}
}

// A tool that cannot be found is 127 and one that cannot be executed 126,
// each with a deploy_stderr that says so (the reference printed no result
// at all, and Heat took that for success).
func TestRunToolMissingOrNotExecutable(t *testing.T) {
	dir := t.TempDir()
	noExec := script(t, dir, "noexec", "#!/bin/sh\n", 0o644)
	noShebang := script(t, dir, "noshebang", "echo hi\n", 0o755)
	script(t, dir, "hidden", "#!/bin/sh\n", 0o644) // in PATH but not executable
	for _, tc := range []struct {
		argv0  string
		status int
		stderr string
	}{
		{"puppet", 127, "puppet: command not found"},
		{"hidden", 127, "hidden: command not found"},
		{filepath.Join(dir, "missing"), 127, "[Errno 2] No such file or directory: '" + filepath.Join(dir, "missing") + "'"},
		{noExec, 126, "[Errno 13] Permission denied: '" + noExec + "'"},
		{noShebang, 126, "[Errno 8] Exec format error: '" + noShebang + "'"},
	} {
		var log strings.Builder
		o := toolEnv(&log, "PATH="+dir).RunTool(context.Background(), hooks.Tool{Argv: []string{tc.argv0}})
		if o.Status != tc.status || o.Stderr != tc.stderr || o.Note != tc.stderr || o.Ran || o.Stdout != "" {
			t.Errorf("%s: %+v; want status %d, stderr %q", tc.argv0, o, tc.status, tc.stderr)
		}
		if o.NotFound != (tc.status == 127) {
			t.Errorf("%s: NotFound %v", tc.argv0, o.NotFound)
		}
	}
}

// Past HEAT_CONFIG_HOOK_TIMEOUT the tool's whole process group is stopped
// (SIGTERM, then SIGKILL after the grace), the status is 124 and
// deploy_stderr ends with a line saying so.
func TestRunToolTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The child ignores SIGTERM, and so does its grandchild: only the
	// SIGKILL after the grace ends them.
	tool := script(t, dir, "slow", "#!/bin/sh\ntrap '' TERM\necho started\necho partial >&2\nsleep 60 &\necho $! > "+pidFile+"\nwait\n", 0o755)
	var log strings.Builder
	env := toolEnv(&log, "PATH=/usr/bin:/bin", hooks.TimeoutVar+"=0.5")
	env.Grace = 300 * time.Millisecond
	start := time.Now()
	o := env.RunTool(context.Background(), hooks.Tool{Argv: []string{tool}})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	want := "partial\n" + tool + " timed out after 0.5 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped"
	if o.Status != 124 || !o.TimedOut || o.Stdout != "started\n" || o.Stderr != want {
		t.Errorf("outcome %+v\nwant stderr %q", o, want)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if alive(strings.TrimSpace(string(pid))) {
		t.Errorf("the tool's child %s outlived the timeout", pid)
	}
}

// alive tells whether a process is running (not gone, not a zombie left
// for init to reap), waiting a little for a kill under way.
func alive(pid string) bool {
	for i := 0; i < 20; i++ {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false
		}
		if _, rest, _ := strings.Cut(string(stat), ") "); strings.HasPrefix(rest, "Z") {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// A tool stopped because the hook was is 143 with a note.
func TestRunToolStoppedWithTheHook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var log strings.Builder
	o := toolEnv(&log, "PATH=/usr/bin:/bin").RunTool(ctx, hooks.Tool{Argv: []string{"sleep", "30"}})
	if o.Status != 143 || !o.Terminated || o.Stderr != "sleep was stopped: the hook was stopped" {
		t.Errorf("outcome %+v", o)
	}
}

// Only the last MaxOutput bytes of each stream are kept, and the log says
// so.
func TestRunToolKeepsTheTail(t *testing.T) {
	var log strings.Builder
	o := toolEnv(&log, "PATH=/usr/bin:/bin").RunTool(context.Background(), hooks.Tool{
		Argv: []string{"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo END; head -c 2000000 /dev/zero >&2; echo ERR >&2"},
	})
	if len(o.Stdout) != hooks.MaxOutput || !strings.HasSuffix(o.Stdout, "xxEND\n") {
		t.Errorf("stdout: %d bytes ending %q", len(o.Stdout), o.Stdout[max(0, len(o.Stdout)-10):])
	}
	if len(o.Stderr) != hooks.MaxOutput || !strings.HasSuffix(o.Stderr, "\x00ERR\n") {
		t.Errorf("stderr: %d bytes", len(o.Stderr))
	}
	if !strings.Contains(log.String(), "[WARNING] sh printed 3000004 bytes on stdout; keeping the last 524288") {
		t.Errorf("log %q", log.String())
	}
}

// A HEAT_CONFIG_HOOK_TIMEOUT that is not a positive number runs no tool:
// status 1, the error as the note and logged, as 55-heat-config exits 1
// on it rather than guess a deadline.
func TestRunToolBadTimeout(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	tool := script(t, dir, "tool", "#!/bin/sh\ntouch "+ran+"\n", 0o755)
	var log strings.Builder
	env := toolEnv(&log, "PATH=/usr/bin:/bin", hooks.TimeoutVar+"=soon")
	o := env.RunTool(context.Background(), hooks.Tool{Argv: []string{tool}})
	want := tool + ` was not run: HEAT_CONFIG_HOOK_TIMEOUT="soon": want a positive number of seconds`
	if o.Status != 1 || o.Ran || o.Stderr != want || !strings.Contains(log.String(), `HEAT_CONFIG_HOOK_TIMEOUT="soon"`) {
		t.Errorf("outcome %+v, log %q\nwant stderr %q", o, log.String(), want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the tool ran")
	}
}
