package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/qemu"
)

// sh is a Spec running script with /bin/sh -c.
func sh(script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}}
}

// startPiped starts spec with its stdout on a pipe the test reads, so the
// test can wait for the child to say it is ready (or give a pid).
func startPiped(t *testing.T, spec Spec) (*Process, *bufio.Reader) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	spec.Stdout = pw
	p, err := Start(spec)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	_ = pr.SetReadDeadline(time.Now().Add(10 * time.Second))
	return p, bufio.NewReader(pr)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's output: %v (got %q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

func readPid(t *testing.T, r *bufio.Reader) int {
	t.Helper()
	line := readLine(t, r)
	pid, err := strconv.Atoi(line)
	if err != nil || pid <= 0 {
		t.Fatalf("want a pid, got %q", line)
	}
	return pid
}

// alive reports whether pid is a live process (a zombie is not: whoever
// reaps orphans here may not do it at once).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'Z' && state != 'X'
}

// waitGone waits up to 5 s for pid to die.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d is still alive", pid)
}

// killLater kills pid when the test ends, for a process the test left
// running on purpose.
func killLater(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script     string
		exit       int
		sig        syscall.Signal
		returncode int
		shell      int
	}{
		{"exit 0", 0, 0, 0, 0},
		{"exit 7", 7, 0, 7, 7},
		{"kill -9 $$", -1, syscall.SIGKILL, -9, 137},
		{"kill -TERM $$", -1, syscall.SIGTERM, -15, 143},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			t.Parallel()
			res, err := Run(context.Background(), sh(tt.script))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.exit || res.Signal != tt.sig || res.Returncode() != tt.returncode || res.ShellStatus() != tt.shell {
				t.Errorf("got exit %d signal %v returncode %d shell %d, want %d %v %d %d",
					res.ExitCode, res.Signal, res.Returncode(), res.ShellStatus(), tt.exit, tt.sig, tt.returncode, tt.shell)
			}
			if res.Stopped != 0 || res.TimedOut {
				t.Errorf("Stopped %v TimedOut %v, want neither", res.Stopped, res.TimedOut)
			}
		})
	}
}

func TestResultCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		res               Result
		returncode, shell int
	}{
		{Result{ExitCode: 0}, 0, 0},
		{Result{ExitCode: 255}, 255, 255},
		{Result{ExitCode: -1, Signal: syscall.SIGHUP}, -1, 129},
		{Result{ExitCode: -1, Signal: syscall.SIGSEGV}, -11, 139},
	}
	for _, tt := range tests {
		if got := tt.res.Returncode(); got != tt.returncode {
			t.Errorf("%+v.Returncode() = %d, want %d", tt.res, got, tt.returncode)
		}
		if got := tt.res.ShellStatus(); got != tt.shell {
			t.Errorf("%+v.ShellStatus() = %d, want %d", tt.res, got, tt.shell)
		}
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		grace    time.Duration
		timeout  time.Duration
		cancel   bool // cancel ctx once the child said "ready"
		stopped  syscall.Signal
		timedOut bool
	}{
		{"cancel, exits on TERM", "echo ready; exec sleep 100", time.Second, 0, true, syscall.SIGTERM, false},
		{"cancel, traps TERM", "trap '' TERM; echo ready; while :; do sleep 0.05; done", 200 * time.Millisecond, 0, true, syscall.SIGKILL, false},
		// The timeout runs from Start: long enough for the trap to be set.
		{"timeout, exits on TERM", "echo ready; exec sleep 100", time.Second, 400 * time.Millisecond, false, syscall.SIGTERM, true},
		{"timeout, traps TERM", "trap '' TERM; echo ready; while :; do sleep 0.05; done", 200 * time.Millisecond, 400 * time.Millisecond, false, syscall.SIGKILL, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := sh(tt.script)
			spec.Grace, spec.Timeout = tt.grace, tt.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p, out := startPiped(t, spec)
			if readLine(t, out) != "ready" {
				t.Fatal("the child did not get ready")
			}
			if tt.cancel {
				cancel()
			}
			res, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != tt.stopped || res.Signal != tt.stopped || res.TimedOut != tt.timedOut {
				t.Errorf("Stopped %v Signal %v TimedOut %v, want %v %v %v", res.Stopped, res.Signal, res.TimedOut, tt.stopped, tt.stopped, tt.timedOut)
			}
			if !tt.cancel && ctx.Err() != nil {
				t.Errorf("ctx ended: %v", ctx.Err())
			}
			if res.Returncode() != -int(tt.stopped) {
				t.Errorf("Returncode %d, want %d", res.Returncode(), -int(tt.stopped))
			}
			if res.Duration > 10*time.Second {
				t.Errorf("took %s", res.Duration)
			}
			waitGone(t, p.Pid())
		})
	}
}

// The deadline runs from Start, not from Wait.
func TestTimeoutFromStart(t *testing.T) {
	t.Parallel()
	spec := Spec{Path: "sleep", Args: []string{"sleep", "100"}, Timeout: 100 * time.Millisecond, Grace: time.Second}
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	begin := time.Now()
	res, err := p.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != syscall.SIGTERM {
		t.Errorf("TimedOut %v Signal %v, want true SIGTERM", res.TimedOut, res.Signal)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Wait took %s", d)
	}
}

func TestRunEndedContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "touch ran"}, Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the child was started")
	}
}

func TestWaitTwice(t *testing.T) {
	t.Parallel()
	p, err := Start(sh("exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := p.Wait(context.Background()); err != nil || res.ExitCode != 3 {
		t.Fatalf("first Wait: %+v, %v", res, err)
	}
	if _, err := p.Wait(context.Background()); err == nil {
		t.Error("second Wait: no error")
	}
}

// A normal exit kills nothing, not even a child left in the group.
func TestNormalExitKillsNothing(t *testing.T) {
	t.Parallel()
	p, out := startPiped(t, sh("sleep 100 & echo $!"))
	res, err := p.Wait(context.Background())
	if err != nil || res.ExitCode != 0 || res.Stopped != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	pid := readPid(t, out)
	killLater(t, pid)
	time.Sleep(100 * time.Millisecond)
	if !alive(pid) {
		t.Error("the background child was killed")
	}
}

func TestStartErrors(t *testing.T) {
	if a := qemu.Arch(); a != "" {
		// Every case here is a child whose exec fails, which then exits
		// in qemu-user's emulation of exit(2): under qemu-aarch64 7.2
		// such a child once hung there (the parent waiting in wait4
		// for 5 minutes), as if forked while another thread held a
		// lock of the emulator's. The errors are mapped by plain Go
		// code, the same on every architecture; natively the test runs.
		t.Skipf("under qemu-%s-static a child whose exec fails can hang in the emulator (docs/cross.md)", a)
	}
	t.Parallel()
	dir := t.TempDir()
	noShebang := filepath.Join(dir, "script")
	if err := os.WriteFile(noShebang, []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want error
	}{
		{"no #! line", noShebang, syscall.ENOEXEC},
		{"missing path", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"bare name not in PATH", "no-such-program-proc-test", exec.ErrNotFound},
		{"directory", dir, syscall.EACCES},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			// Another test forking while the file was open for writing
			// can make it busy for a moment (golang.org/issue/22315).
			for range 50 {
				_, err = Start(Spec{Path: tt.path})
				if !errors.Is(err, syscall.ETXTBSY) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want one wrapping %v", err, tt.want)
			}
			if _, err := Run(context.Background(), Spec{Path: tt.path}); err == nil {
				t.Error("Run: no error")
			}
		})
	}
}

func TestSpecFields(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := NewCapture(1<<10, 1<<10)
	script := `echo "$(tr '\0' '\n' </proc/$$/cmdline | head -n 1)|$0|$1|$FOO|$(pwd)"`
	res, err := Run(context.Background(), Spec{
		Path:   "sh", // looked up in PATH
		Args:   []string{"argv0", "-c", script, "zero", "one"},
		Env:    []string{"FOO=bar", "PATH=/usr/bin:/bin"},
		Dir:    dir,
		Stdout: out,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if got, want := string(out.Bytes()), "argv0|zero|one|bar|"+dir+"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	in := bytes.Repeat([]byte("stdin bytes\n"), 10000) // more than a pipe holds
	out := NewCapture(len(in), 0)
	res, err := Run(context.Background(), Spec{Path: "cat", Stdin: bytes.NewReader(in), Stdout: out})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Errorf("got %d bytes back, want the %d sent", len(out.Bytes()), len(in))
	}
	// No stdin: /dev/null.
	out = NewCapture(100, 0)
	if _, err := Run(context.Background(), Spec{Path: "cat", Stdout: out}); err != nil || out.Len() != 0 {
		t.Errorf("cat of no stdin: %q, %v", out.Bytes(), err)
	}
}

// A child that does not read its stdin does not hold Run.
func TestStdinUnread(t *testing.T) {
	t.Parallel()
	in := bytes.NewReader(make([]byte, 1<<20))
	res, err := Run(context.Background(), Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "exit 4"}, Stdin: in, Grace: time.Second})
	if err != nil || res.ExitCode != 4 {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestCaptureOutput(t *testing.T) {
	t.Parallel()
	stdout, stderr := NewCapture(100, 100), NewCapture(100, 100)
	spec := sh("echo out; echo err >&2; echo out2")
	spec.Stdout, spec.Stderr = stdout, stderr
	if res, err := Run(context.Background(), spec); err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if got := string(stdout.Bytes()); got != "out\nout2\n" {
		t.Errorf("stdout %q", got)
	}
	if got := string(stderr.Bytes()); got != "err\n" {
		t.Errorf("stderr %q", got)
	}
	// One writer for both: one pipe, so the order is kept.
	both := NewCapture(100, 100)
	spec.Stdout, spec.Stderr = both, both
	if _, err := Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := string(both.Bytes()); got != "out\nerr\nout2\n" {
		t.Errorf("combined %q", got)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("write failed") }

func TestOutputWriteError(t *testing.T) {
	t.Parallel()
	spec := sh("echo out")
	spec.Stdout = errWriter{}
	res, err := Run(context.Background(), spec)
	if err == nil || res.ExitCode != 0 {
		t.Errorf("got %+v, %v; want exit 0 and the write error", res, err)
	}
}

// A grandchild holding the stdout pipe after the child exited holds Run
// only for the wait delay, and is not killed.
func TestGrandchildHoldsPipe(t *testing.T) {
	t.Parallel()
	out := NewCapture(100, 100)
	spec := sh("sleep 100 & echo $!")
	spec.Stdout, spec.Grace = out, 300*time.Millisecond
	begin := time.Now()
	res, err := Run(context.Background(), spec)
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Run took %s", d)
	}
	if err != nil || res.ExitCode != 0 || res.Stopped != 0 {
		t.Errorf("got %+v, %v", res, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out.Bytes())))
	if err != nil {
		t.Fatalf("output %q", out.Bytes())
	}
	killLater(t, pid)
	if !alive(pid) {
		t.Error("the grandchild was killed")
	}
}

func TestOnTick(t *testing.T) {
	t.Parallel()
	ticks := 0
	res, err := Run(context.Background(), Spec{
		Path: "sleep", Args: []string{"sleep", "0.5"},
		Tick: 50 * time.Millisecond, OnTick: func() { ticks++ },
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	if ticks < 3 {
		t.Errorf("%d ticks in %s", ticks, res.Duration)
	}
	// Tick without OnTick is nothing.
	if _, err := Run(context.Background(), Spec{Path: "true", Tick: time.Millisecond}); err != nil {
		t.Error(err)
	}
}

func TestExtraFiles(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	spec := sh("echo to fd 3 >&3")
	spec.ExtraFiles = []*os.File{pw}
	res, err := Run(context.Background(), spec)
	pw.Close()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	got, err := io.ReadAll(pr)
	if err != nil || string(got) != "to fd 3\n" {
		t.Errorf("fd 3: %q, %v", got, err)
	}
}

// procGoroutines lists the goroutines, other than the caller's, running
// code of Process or of os/exec. A goroutine that has returned but not yet
// been torn down (only runtime.goexit on its stack) does not count.
func procGoroutines() []string {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	var out []string
	for i, g := range strings.Split(string(buf[:n]), "\n\n") {
		frames, _, _ := strings.Cut(g, "\ncreated by ")
		if i > 0 && (strings.Contains(frames, "os/exec.") || strings.Contains(frames, "proc.(*Process)")) {
			out = append(out, g)
		}
	}
	return out
}

// Run returns only after its goroutines (and exec's) ended. Not parallel:
// other tests' goroutines would show.
func TestNoGoroutineLeak(t *testing.T) {
	if g := procGoroutines(); len(g) > 0 {
		t.Fatalf("goroutines before the test:\n%s", strings.Join(g, "\n\n"))
	}
	// The check sees Wait's goroutine while the child runs.
	p, err := Start(Spec{Path: "sleep", Args: []string{"sleep", "100"}})
	if err != nil {
		t.Fatal(err)
	}
	stop, stopped := context.WithCancel(context.Background())
	waited := make(chan struct{})
	go func() { _, _ = p.Wait(stop); close(waited) }()
	for end := time.Now().Add(5 * time.Second); len(procGoroutines()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the check does not see Wait's goroutine")
		}
	}
	stopped()
	<-waited
	tests := []struct {
		name string
		// cancelAfter ends the run's context; each case starts its own
		// clock, so a slow case before it cannot spend it.
		cancelAfter time.Duration
		spec        Spec
		left        bool // the output is the pid of a process left running
	}{
		{"captured output and stdin", 0,
			Spec{Path: "cat", Stdin: strings.NewReader("hi"), Stdout: NewCapture(10, 10), Stderr: NewCapture(10, 10)}, false},
		{"grandchild holds the pipe", 0,
			Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "sleep 2 & echo $!"}, Stdout: NewCapture(10, 10), Grace: 200 * time.Millisecond}, true},
		{"ctx ends", 300 * time.Millisecond,
			Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo x; sleep 100"}, Stdout: NewCapture(10, 10), Tick: 10 * time.Millisecond, OnTick: func() {}}, false},
		{"timeout, KILL", 0,
			Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "trap '' TERM; sleep 100"}, Stdout: NewCapture(10, 10), Timeout: 200 * time.Millisecond, Grace: 100 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.cancelAfter > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancelAfter)
				defer cancel()
			}
			before := runtime.NumGoroutine()
			_, err := Run(ctx, tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if tt.left {
				pid, err := strconv.Atoi(strings.TrimSpace(string(tt.spec.Stdout.(*Capture).Bytes())))
				if err != nil {
					t.Fatal(err)
				}
				killLater(t, pid)
			}
			if g := procGoroutines(); len(g) > 0 {
				t.Errorf("goroutines left:\n%s", strings.Join(g, "\n\n"))
			}
			// Returned goroutines may take a moment to be torn down.
			after := runtime.NumGoroutine()
			for end := time.Now().Add(time.Second); after > before && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
				after = runtime.NumGoroutine()
			}
			if after > before {
				t.Errorf("%d goroutines before Run, %d after", before, after)
			}
		})
	}
}
