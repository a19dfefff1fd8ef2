// Package proc is the one way the programs run a child process: in its own
// process group, under a deadline, stopped with SIGTERM and then SIGKILL
// after a grace period, together with every descendant it started (found
// in /proc, since a child may start process groups of its own), with its
// output passed straight through or captured with a bounded head and tail,
// and optional ticks while it runs (the systemd watchdog). It also holds
// the one file-lock helper.
package proc

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is
// zero.
const DefaultGrace = 10 * time.Second

// Spec describes a child process.
type Spec struct {
	// Path is the program, as for exec.Command: a name without a slash
	// is looked up in the parent's PATH.
	Path string
	// Args is argv, Args[0] included; when empty, []string{Path}.
	Args []string
	// Env is the environment; nil means the parent's (as exec.Cmd).
	Env []string
	// Dir is the working directory; empty means the parent's.
	Dir string
	// Stdin is the child's standard input; nil means /dev/null. A reader
	// that is not an *os.File is copied through a pipe by a goroutine,
	// so it must not block for ever.
	Stdin io.Reader
	// Stdout and Stderr receive the child's output; nil means /dev/null.
	// An *os.File is handed to the child as is (no pipe, no goroutine);
	// anything else is copied through a pipe (one pipe when both are the
	// same writer).
	Stdout, Stderr io.Writer
	// ExtraFiles become fds 3, 4, ... in the child. The caller keeps and
	// closes its copies (close a pipe's write end after Start, or its
	// reader will not see EOF).
	ExtraFiles []*os.File
	// Timeout is the deadline measured from Start; 0 means none besides
	// the context given to Wait.
	Timeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL; 0 means DefaultGrace.
	// It also bounds how long Wait waits, once the child has exited, for
	// output pipes that a grandchild still holds open.
	Grace time.Duration
	// When Tick > 0 and OnTick != nil, OnTick is called every Tick while
	// Wait waits, from the goroutine that called Wait.
	Tick   time.Duration
	OnTick func()
}

// Result is how a child ended.
type Result struct {
	ExitCode int            // the exit status; -1 when a signal killed it
	Signal   syscall.Signal // the signal that killed it; 0 when it exited
	Stopped  syscall.Signal // the last signal Wait sent because ctx ended or Timeout passed (SIGTERM or SIGKILL); 0 when none
	TimedOut bool           // Spec.Timeout passed (as opposed to ctx ending)
	Duration time.Duration  // from Start until the child was reaped and its output drained
}

// Returncode is Python's subprocess returncode: the exit status, or -n
// for signal n.
func (r Result) Returncode() int {
	if r.Signal != 0 {
		return -int(r.Signal)
	}
	return r.ExitCode
}

// ShellStatus is what a shell reports: the exit status, or 128+n for
// signal n.
func (r Result) ShellStatus() int {
	if r.Signal != 0 {
		return 128 + int(r.Signal)
	}
	return r.ExitCode
}

// Process is a started child.
type Process struct {
	cmd     *exec.Cmd
	start   time.Time
	timeout time.Duration
	grace   time.Duration
	tick    time.Duration
	onTick  func()
	waited  atomic.Bool
}

// Start starts the child in its own process group, so that stopping it
// reaches whatever it started in that group. A start failure is returned
// as exec.Cmd.Start returns it, so errors.Is(err, syscall.ENOEXEC) (no #!
// line) and errors.Is(err, fs.ErrNotExist) (a missing path) work; a bare
// name not found in PATH gives exec.ErrNotFound, as exec.Command does.
func Start(spec Spec) (*Process, error) {
	args := spec.Args
	if len(args) == 0 {
		args = []string{spec.Path}
	}
	cmd := exec.Command(spec.Path, args[1:]...)
	cmd.Args = append([]string(nil), args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdin = spec.Stdin
	cmd.Stdout = spec.Stdout
	cmd.Stderr = spec.Stderr
	cmd.ExtraFiles = spec.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// A grandchild that keeps an output pipe open after the child exited
	// must not hold Wait for ever; exec closes the pipes after this.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Process{
		cmd:     cmd,
		start:   time.Now(),
		timeout: spec.Timeout,
		grace:   grace,
		tick:    spec.Tick,
		onTick:  spec.OnTick,
	}, nil
}

// Pid is the child's process ID, which is also its process group ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the child to exit and its output to be drained. When ctx
// ends or the Timeout passes first, the child and its descendants get
// SIGTERM, then SIGKILL if the child has not exited within the grace
// period; once the child has been reaped, the rest of its process group
// has what is left of the grace to exit, then gets SIGKILL, so a leftover
// there goes too. A child that exits on its own
// has nothing killed. (A descendant in another group that ignores SIGTERM
// outlives a child that exits on it: once the child is gone, /proc no
// longer links them.)
//
// An exit status or a death by signal is not an error: it is in the
// Result. The error is non-nil only when waiting failed otherwise, or
// when copying the child's output failed although it exited normally (the
// Result is then still filled in). Wait may be called once; every
// goroutine it starts has finished when it returns.
func (p *Process) Wait(ctx context.Context) (Result, error) {
	if !p.waited.CompareAndSwap(false, true) {
		return Result{ExitCode: -1}, errors.New("proc: Wait called twice")
	}
	pid := p.cmd.Process.Pid

	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()

	var deadline <-chan time.Time
	if p.timeout > 0 {
		t := time.NewTimer(p.timeout - time.Since(p.start))
		defer t.Stop()
		deadline = t.C
	}
	var tick <-chan time.Time
	if p.tick > 0 && p.onTick != nil {
		t := time.NewTicker(p.tick)
		defer t.Stop()
		tick = t.C
	}

	var res Result
	var graceTimer *time.Timer
	var graceC <-chan time.Time
	ctxDone := ctx.Done()
	stop := func(timedOut bool) {
		// Stop once: whichever of ctx and the deadline comes first.
		ctxDone, deadline = nil, nil
		res.TimedOut = timedOut
		res.Stopped = syscall.SIGTERM
		p.killTree(syscall.SIGTERM)
		graceTimer = time.NewTimer(p.grace)
		graceC = graceTimer.C
	}

	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick:
			p.onTick()
		case <-ctxDone:
			stop(false)
		case <-deadline:
			stop(true)
		case <-graceC:
			graceC = nil
			res.Stopped = syscall.SIGKILL
			p.killTree(syscall.SIGKILL)
		}
	}
	if res.Stopped != 0 {
		// The rest of the group had SIGTERM too: what is left of the grace
		// lets it finish (a script's trap writing its last words), then a
		// leftover goes (a daemonised child). The group ID cannot have
		// been reused while the group has members.
		drainGroup(pid, graceC)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	res.Duration = time.Since(p.start)
	if graceTimer != nil {
		graceTimer.Stop()
	}

	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) || errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	st := p.cmd.ProcessState
	if st == nil {
		res.ExitCode = -1
		return res, err
	}
	res.ExitCode = st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = -1
		res.Signal = ws.Signal()
	}
	return res, err
}

// drainGroup waits until process group pgid has no live member or grace
// fires (nil: it has already).
func drainGroup(pgid int, grace <-chan time.Time) {
	if grace == nil {
		return
	}
	poll := time.NewTicker(25 * time.Millisecond)
	defer poll.Stop()
	for groupLive(pgid) {
		select {
		case <-grace:
			return
		case <-poll.C:
		}
	}
}

// killTree signals the child's tree; once the child has been reaped, only
// its group (its pid may since name another process).
func (p *Process) killTree(sig syscall.Signal) {
	pid := p.cmd.Process.Pid
	if errors.Is(p.cmd.Process.Signal(syscall.Signal(0)), os.ErrProcessDone) {
		_ = syscall.Kill(-pid, sig)
		return
	}
	killTree(pid, sig)
}

// Run starts the child and waits for it (see Start and Wait). When ctx
// has already ended, it starts nothing and returns ctx's error, as
// exec.CommandContext does: a script must not be started only to be
// stopped at once.
func Run(ctx context.Context, spec Spec) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, err
	}
	p, err := Start(spec)
	if err != nil {
		return Result{ExitCode: -1}, err
	}
	return p.Wait(ctx)
}
