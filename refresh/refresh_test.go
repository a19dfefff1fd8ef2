package refresh

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/lockedbuf"
)

type result struct {
	code           int
	stdout, stderr string
}

func orc(t *testing.T, base string, environ []string, args ...string) result {
	t.Helper()
	var stdout, stderr lockedbuf.Buffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Grace: 300 * time.Millisecond,
		Environ: append([]string{"PATH=/usr/bin:/bin", "OS_REFRESH_CONFIG_BASE_DIR=" + base}, environ...)}
	if !hasArg(args, "--lockfile") && !hasArg(args, "--print-base") {
		args = append(args, "--lockfile", filepath.Join(base, "..", filepath.Base(base)+".lock"))
	}
	err := Run(context.Background(), args, env)
	return result{exitcode.Of(err), stdout.String(), stderr.String()}
}

func hasArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

func script(t *testing.T, path, body string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestPhasesInOrderAndFailureRunsErrorD(t *testing.T) {
	base := t.TempDir() + "/base"
	trace := base + "/../trace"
	for _, ph := range []string{"migration", "post-configure", "configure", "pre-configure"} {
		script(t, base+"/"+ph+".d/10-x", "#!/bin/sh\necho "+ph+" >> "+trace+"\n")
	}
	r := orc(t, base, nil)
	got, _ := os.ReadFile(trace)
	if r.code != 0 || string(got) != "pre-configure\nconfigure\npost-configure\nmigration\n" {
		t.Fatalf("%+v trace %q", r, got)
	}
	os.Remove(trace)
	script(t, base+"/configure.d/20-fail", "#!/bin/sh\nexit 3\n")
	script(t, base+"/error.d/10-handler", "#!/bin/sh\necho handler >> "+trace+"\n")
	r = orc(t, base, nil)
	got, _ = os.ReadFile(trace)
	want := "[ERROR] during configure phase. [Command '['dib-run-parts', '" + base + "/configure.d']' returned non-zero exit status 3.]\n\n"
	if r.code != 1 || string(got) != "pre-configure\nconfigure\nhandler\n" || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "[INFO] Calling error handlers.") || !strings.Contains(r.stderr, "[ERROR] Aborting...") {
		t.Fatalf("%+v trace %q", r, got)
	}
}

func TestPrintAndUsage(t *testing.T) {
	base := t.TempDir()
	if r := orc(t, base, nil, "--print-base"); r.code != 0 || r.stdout != base+"\n" {
		t.Fatalf("%+v", r)
	}
	if r := orc(t, base, nil, "--print-phases"); r.stdout != "pre-configure\tconfigure\tpost-configure\tmigration\n" {
		t.Fatalf("%+v", r)
	}
	if r := orc(t, base, nil, "--log-level", "WARNING"); r.code != exitcode.Usage || !strings.Contains(r.stderr, "invalid choice: 'WARNING'") {
		t.Fatalf("%+v", r)
	}
	if r := orc(t, base, nil, "--timeout", "soon"); r.code != exitcode.Usage {
		t.Fatalf("%+v", r)
	}
}

func TestDefaultBaseDir(t *testing.T) {
	for _, tc := range []struct {
		dirs []string
		want string
		warn bool
	}{
		{nil, DefaultBaseDir, false},
		{[]string{OldBaseDir}, OldBaseDir, true},
		{[]string{OldBaseDir, DefaultBaseDir}, DefaultBaseDir, false},
	} {
		root := t.TempDir()
		for _, d := range tc.dirs {
			os.MkdirAll(root+d, 0o755)
		}
		var out, errb bytes.Buffer
		Run(context.Background(), []string{"--print-base"}, Env{Stdout: &out, Stderr: &errb, Root: root})
		if out.String() != root+tc.want+"\n" || strings.Contains(errb.String(), "WARNING:root:Base directory") != tc.warn {
			t.Errorf("%v: %q %q", tc.dirs, out.String(), errb.String())
		}
	}
}

func TestLockHeldIsExit11(t *testing.T) {
	dir := t.TempDir()
	lock := dir + "/orc.lock"
	holder := exec.Command("flock", lock, "sleep", "30")
	if err := holder.Start(); err != nil {
		t.Skip("flock(1) not available")
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	for i := 0; i < 100; i++ { // wait until it holds the lock
		if exec.Command("flock", "-n", lock, "true").Run() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := orc(t, dir+"/base", nil, "--lockfile", lock)
	if r.code != int(syscall.EAGAIN) || !strings.Contains(r.stderr, "[ERROR] Could not lock "+lock+". [Errno 11] Resource temporarily unavailable") {
		t.Fatalf("%+v", r)
	}
}

// Deliberate difference: while the lock is held the file says who holds
// it (the reference's line sits in a Python buffer, so the file is empty).
// After the run it is empty, as in the reference.
func TestLockFileContent(t *testing.T) {
	dir := t.TempDir()
	lock := dir + "/orc.lock"
	script(t, dir+"/base/configure.d/10-look", "#!/bin/sh\ncat "+lock+" > "+dir+"/seen\n")
	r := orc(t, dir+"/base", nil, "--lockfile", lock)
	seen, _ := os.ReadFile(dir + "/seen")
	if r.code != 0 || !strings.HasPrefix(string(seen), "Locked by pid==") || !strings.Contains(string(seen), " at time.struct_time(tm_year=") {
		t.Fatalf("%+v seen %q", r, seen)
	}
	if after, _ := os.ReadFile(lock); len(after) != 0 {
		t.Fatalf("lock file after the run: %q", after)
	}
}

// Bad input: each is a clear one-line error with exit 1 and no later phase.
func TestBadInput(t *testing.T) {
	t.Run("lock file in a missing directory", func(t *testing.T) {
		dir := t.TempDir()
		r := orc(t, dir+"/base", nil, "--lockfile", dir+"/missing/orc.lock")
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 ||
			!strings.Contains(r.stderr, "Could not open lock file "+dir+"/missing/orc.lock. [Errno 2] No such file or directory") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("phase dir is a file", func(t *testing.T) {
		base := t.TempDir() + "/base"
		script(t, base+"/configure.d", "not a directory")
		script(t, base+"/post-configure.d/10-x", "#!/bin/sh\ntouch "+base+"/../ran\n")
		r := orc(t, base, nil)
		if r.code != 1 || !strings.Contains(r.stderr, "during configure phase. ["+base+"/configure.d is not a directory]") {
			t.Fatalf("%+v", r)
		}
		if _, err := os.Stat(base + "/../ran"); err == nil {
			t.Fatal("a later phase ran")
		}
	})
}

func TestTimeoutRunsErrorDAndFails(t *testing.T) {
	base := t.TempDir() + "/base"
	script(t, base+"/configure.d/10-slow", "#!/bin/sh\nsleep 30\n")
	script(t, base+"/error.d/10-handler", "#!/bin/sh\ntouch "+base+"/../handled\n")
	start := time.Now()
	r := orc(t, base, nil, "--timeout", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "Timeout reached: 1s. Sending SIGTERM") ||
		!strings.Contains(r.stderr, "died with <Signals.SIGTERM: 15>.") {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(base + "/../handled"); err != nil {
		t.Fatal("error.d did not run")
	}
	if time.Since(start) > 15*time.Second {
		t.Fatal("timeout not enforced")
	}
}

func TestLocaleCoercion(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "LC_CTYPE=C.UTF-8"},
		{[]string{"LANG=C"}, "LC_CTYPE=C.UTF-8"},
		{[]string{"LANG=C.UTF-8"}, ""},
		{[]string{"LC_ALL=C"}, ""},
		{[]string{"LC_CTYPE=POSIX", "LANG=en_US.UTF-8"}, "LC_CTYPE=C.UTF-8"},
	} {
		got := ""
		for _, kv := range coerceLocale(tc.env) {
			if strings.HasPrefix(kv, "LC_CTYPE=") {
				got = kv
			}
		}
		if tc.want == "" && got != "" && !slicesContains(tc.env, got) || tc.want != "" && got != tc.want {
			t.Errorf("%v: got %q", tc.env, got)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
