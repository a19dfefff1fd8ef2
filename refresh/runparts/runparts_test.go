package runparts

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/logging"
)

func TestSortNumeric(t *testing.T) {
	// The order `LANG=C sort -n` gives (checked with GNU sort).
	in := []string{"100-hundred", "20-b", "x_y-Z", "10-a", "9-nine", "B", "a", "010-zero", "-5x", "10-A", "0"}
	want := []string{"-5x", "0", "B", "a", "x_y-Z", "9-nine", "010-zero", "10-A", "10-a", "20-b", "100-hundred"}
	SortNumeric(in)
	if !slices.Equal(in, want) {
		t.Fatalf("got  %q\nwant %q", in, want)
	}
}

func script(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func TestListSelectsExecutableMatchingFiles(t *testing.T) {
	dir := t.TempDir()
	script(t, dir+"/20-b", "#!/bin/sh\n", 0o755)
	script(t, dir+"/10-a", "#!/bin/sh\n", 0o755)
	script(t, dir+"/a.sh", "#!/bin/sh\n", 0o755)      // name has a dot
	script(t, dir+"/30-noexec", "#!/bin/sh\n", 0o644) // not executable
	os.Mkdir(dir+"/40-dir", 0o755)
	os.Symlink("10-a", dir+"/50-link")
	os.Symlink("missing", dir+"/60-dangling")
	got, err := List(dir, regexp.MustCompile(DefaultRegex))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10-a", "20-b", "50-link"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func runner(stdout, stderr io.Writer, env []string) *Runner {
	return &Runner{Stdout: stdout, Stderr: stderr, Env: env, Log: logging.Discard, Grace: 300 * time.Millisecond}
}

func TestFirstFailureStopsWithItsStatus(t *testing.T) {
	base := t.TempDir()
	dir := base + "/configure.d"
	script(t, dir+"/10-ok", "#!/bin/sh\necho 10 >> "+base+"/trace\n", 0o755)
	script(t, dir+"/20-fail", "#!/bin/sh\nexit 42\n", 0o755)
	script(t, dir+"/30-never", "#!/bin/sh\necho 30 >> "+base+"/trace\n", 0o755)
	err := runner(io.Discard, io.Discard, nil).Run(context.Background(), dir)
	f, ok := err.(*Failure)
	if !ok || f.Status != 42 || f.Script != "20-fail" {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(base + "/trace"); string(b) != "10\n" {
		t.Fatalf("trace %q", b)
	}
}

func TestEnvironmentDAndBashEnvironment(t *testing.T) {
	base := t.TempDir()
	dir := base + "/configure.d"
	script(t, base+"/environment.d/10-env", "export FOO=bar\nLOCAL=x\n", 0o644)
	script(t, base+"/environment.d/skip.me~", "export SKIPPED=1\n", 0o644)
	script(t, dir+"/10-env", "#!/bin/sh\nenv > "+base+"/env\n", 0o755)
	var stderr bytes.Buffer
	err := runner(io.Discard, &stderr, []string{"PATH=/usr/bin:/bin", "SHLVL=3"}).Run(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := os.ReadFile(base + "/env")
	for _, want := range []string{"FOO=bar\n", "SHLVL=4\n", "_=" + dir + "/10-env\n"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	for _, not := range []string{"LOCAL=", "SKIPPED="} {
		if strings.Contains(string(env), not) {
			t.Errorf("env has %q", not)
		}
	}
	if !strings.Contains(stderr.String(), "++ export FOO=bar\n") {
		t.Errorf("no xtrace of the env file:\n%s", stderr.String())
	}
}

func TestFailingEnvFileStopsBeforeScripts(t *testing.T) {
	base := t.TempDir()
	dir := base + "/configure.d"
	script(t, base+"/environment.d/10-env", "echo $UNSET_VARIABLE\n", 0o644)
	script(t, dir+"/10-a", "#!/bin/sh\ntouch "+base+"/ran\n", 0o755)
	err := runner(io.Discard, io.Discard, []string{"PATH=/usr/bin:/bin"}).Run(context.Background(), dir)
	if f, ok := err.(*Failure); !ok || f.Status == 0 {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(base + "/ran"); err == nil {
		t.Fatal("script ran after a failing environment file")
	}
}

func TestNoShebangRunsWithBash(t *testing.T) {
	dir := t.TempDir()
	script(t, dir+"/10-plain", "echo plain $((1+1))\n", 0o755)
	var out bytes.Buffer
	if err := runner(&out, io.Discard, []string{"PATH=/usr/bin:/bin"}).Run(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if out.String() != "plain 2\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

// Improvement over the reference (which sends SIGKILL at once): a deadline
// sends SIGTERM to the script and everything it started, then SIGKILL to
// whatever is left after the grace period.
func TestDeadlineTermsThenKillsDescendants(t *testing.T) {
	base := t.TempDir()
	dir := base + "/configure.d"
	// The script ignores TERM; its child (in its own session) does not.
	script(t, dir+"/10-stubborn", "#!/bin/bash\ntrap '' TERM\nsetsid sleep 60 &\necho $! > "+base+"/child\nsleep 60\n", 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := runner(io.Discard, io.Discard, []string{"PATH=/usr/bin:/bin"}).Run(ctx, dir)
	f, ok := err.(*Failure)
	if !ok || f.Signal.String() != "killed" {
		t.Fatalf("error %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("took too long")
	}
	pid, _ := os.ReadFile(base + "/child")
	p := strings.TrimSpace(string(pid))
	for i := 0; i < 50; i++ {
		if _, err := os.Stat("/proc/" + p); err != nil {
			return
		}
		if st, _ := os.ReadFile("/proc/" + p + "/stat"); strings.Contains(string(st), ") Z ") {
			return // killed, not yet reaped by init
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child %s of the script survived", p)
}

// Deliberate fix: the reference fails every phase (status 1, no message)
// when environment.d is empty, holds nothing sourceable, or is a symbolic
// link to a directory. Here scripts run, with the linked files sourced.
func TestEmptyOrLinkedEnvironmentDIsHarmless(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(base string)
		want  string
	}{
		{"empty", func(base string) { os.Mkdir(base+"/environment.d", 0o755) }, ""},
		{"nothing sourceable", func(base string) {
			script(t, base+"/environment.d/skip~", "export X=1\n", 0o644)
			os.Mkdir(base+"/environment.d/subdir", 0o755)
		}, ""},
		{"symlink to a directory", func(base string) {
			script(t, base+"/real-env/10-x", "export FROM_LINK=yes\n", 0o644)
			os.Symlink("real-env", base+"/environment.d")
		}, "FROM_LINK=yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			tc.setup(base)
			script(t, base+"/configure.d/10-a", "#!/bin/sh\nenv > "+base+"/env\n", 0o755)
			if err := runner(io.Discard, io.Discard, []string{"PATH=/usr/bin:/bin"}).Run(context.Background(), base+"/configure.d"); err != nil {
				t.Fatal(err)
			}
			env, err := os.ReadFile(base + "/env")
			if err != nil || !strings.Contains(string(env), tc.want) {
				t.Fatalf("script did not run as expected: %v\n%s", err, env)
			}
		})
	}
}

// Kept from the reference: a phase directory given as a symbolic link runs
// nothing (its find does not enter it); a WARNING says so.
func TestSymlinkedDirRunsNothing(t *testing.T) {
	base := t.TempDir()
	script(t, base+"/real/10-a", "#!/bin/sh\ntouch "+base+"/ran\n", 0o755)
	os.Symlink("real", base+"/configure.d")
	var log bytes.Buffer
	r := runner(io.Discard, io.Discard, nil)
	r.Log = slog.New(slog.NewTextHandler(&log, nil))
	if err := r.Run(context.Background(), base+"/configure.d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base + "/ran"); err == nil || !strings.Contains(log.String(), "is a symbolic link") {
		t.Fatalf("ran or no warning: %s", log.String())
	}
}

// Bad input: a script whose interpreter is missing cannot run. It fails
// with bash's status 127 and a line naming it, and stops the directory.
func TestUnrunnableScriptStops(t *testing.T) {
	base := t.TempDir()
	dir := base + "/configure.d"
	script(t, dir+"/10-bad", "#!/nonexistent/interpreter\n", 0o755)
	script(t, dir+"/20-never", "#!/bin/sh\ntouch "+base+"/ran\n", 0o755)
	var stderr bytes.Buffer
	err := runner(io.Discard, &stderr, nil).Run(context.Background(), dir)
	f, ok := err.(*Failure)
	if !ok || f.Status != 127 || f.Script != "10-bad" || !strings.Contains(stderr.String(), dir+"/10-bad: ") {
		t.Fatalf("error %v, stderr %q", err, stderr.String())
	}
	if _, err := os.Stat(base + "/ran"); err == nil {
		t.Fatal("a later script ran")
	}
}
