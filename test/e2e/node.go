package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The agent as `make install DESTDIR=D PREFIX=/usr` lays it out, run in
// place under D (see Installed.Environ).
var installedFiles = []string{
	"usr/bin/tripleo-agent", "usr/bin/os-collect-config", "usr/bin/os-refresh-config",
	"usr/bin/os-apply-config", "usr/bin/dib-run-parts", "usr/bin/heat-config-notify",
	"usr/bin/heat-config-rebuild-deployed",
	"usr/libexec/os-refresh-config/configure.d/20-os-apply-config",
	"usr/libexec/os-refresh-config/configure.d/55-heat-config",
	"usr/libexec/os-refresh-config/post-configure.d/99-refresh-completed",
	"usr/libexec/heat-config/hooks/script", "usr/libexec/heat-config/hooks/puppet",
	"usr/libexec/os-apply-config/templates/var/run/heat-config/heat-config",
}

// Installed is a DESTDIR holding the installed agent.
type Installed struct{ Dir string }

var (
	installOnce sync.Once
	installed   Installed
	installErr  error
)

// install runs make install into a directory of its own, once per test
// run. BIN keeps the build out of the checkout's bin/, which others use.
func install(t *testing.T) Installed {
	t.Helper()
	in, err := installOnly()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// installOnly is install without a test, for the images built ahead
// (prebuild).
func installOnly() (Installed, error) {
	installOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dest := filepath.Join(buildDir, "destdir")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		res, err := Run(context.Background(), 10*time.Minute, Cmd{Dir: root, Argv: []string{"make", "-s", "install",
			"DESTDIR=" + dest, "PREFIX=/usr", "BIN=" + filepath.Join(buildDir, "bin"), "GO=" + goTool}})
		if err != nil {
			installErr = fmt.Errorf("make install: %v\n%s%s", err, res.Stdout, tail(res.Stderr, 4000))
			return
		}
		var missing []string
		for _, f := range installedFiles {
			if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			installErr = fmt.Errorf("make install did not lay out: %s", strings.Join(missing, ", "))
		}
		installed = Installed{Dir: dest}
	})
	return installed, installErr
}

// Environ points the programs into the tree (they find each other, their
// scripts, hooks and templates there) and keeps the rest.
func (in Installed) Environ() []string {
	d := func(p string) string { return filepath.Join(in.Dir, p) }
	return append(os.Environ(),
		"PATH="+d("usr/bin")+":"+os.Getenv("PATH"),
		"OS_REFRESH_CONFIG_BASE_DIR="+d("usr/libexec/os-refresh-config"),
		"OS_CONFIG_APPLIER_TEMPLATES="+d("usr/libexec/os-apply-config/templates"),
		"HEAT_CONFIG_HOOKS="+d("usr/libexec/heat-config/hooks"),
		"HEAT_CONFIG_NOTIFY="+d("usr/bin/heat-config-notify"),
	)
}

// Node is one machine's filesystem as lab/node gives it: what programs
// run there write to /etc, /var/lib, /var/log, /var/cache and /run lands
// under Dir (the same Dir again is the same node, e.g. after a restart).
type Node struct{ Dir string }

// Path is where the node's file p (absolute) is on this machine, if the
// node wrote it.
func (n Node) Path(p string) string {
	p = filepath.Clean(p)
	if rest, ok := strings.CutPrefix(p, "/var/run/"); ok {
		p = "/run/" + rest
	}
	return filepath.Join(n.Dir, "upper", p)
}

// WriteFile puts a file on the node (before any program runs there).
func (n Node) WriteFile(p string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(n.Path(p)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(n.Path(p), data, mode)
}

// Line is a line of a daemon's output with the time it was read.
type Line struct {
	At   time.Time
	Text string
}

// Daemon is a long-running program on a node: its output lines are
// timestamped as they arrive (os-collect-config's own lines carry no
// time) and copied to a log file.
type Daemon struct {
	cmd   *exec.Cmd
	done  chan struct{} // closed when the process has been waited for
	mntNS string        // its mount namespace, to find what it leaves behind
	err   error         // set, as left, before done is closed
	left  []string      // what was still in the namespace after it ended (killed)

	mu    sync.Mutex
	lines []Line
}

// StartDaemon runs argv on the node with env; logPath receives the
// timestamped output. It is stopped with SIGTERM (then SIGKILL) when
// deadline passes, as by Stop.
func StartDaemon(n Node, env []string, logPath string, deadline time.Duration, argv ...string) (*Daemon, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	d := &Daemon{done: make(chan struct{})}
	d.cmd = exec.Command(filepath.Join(lab.Scripts, "node"), append([]string{n.Dir}, argv...)...)
	d.cmd.Env = append(env, "E2E_DIR="+lab.Dir)
	d.cmd.Stdout, d.cmd.Stderr = pw, pw
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = d.cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		logf.Close()
		return nil, err
	}
	fmt.Fprintf(logf, "%s e2e: started %s (pid %d)\n", stamp(time.Now()), strings.Join(argv, " "), d.cmd.Process.Pid)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := Line{At: time.Now(), Text: sc.Text()}
			d.mu.Lock()
			d.lines = append(d.lines, l)
			d.mu.Unlock()
			fmt.Fprintf(logf, "%s %s\n", stamp(l.At), l.Text)
		}
	}()
	// lab/node enters the namespace first thing; read it before anything
	// can reap the process.
	d.mntNS = d.namespace()
	term := time.AfterFunc(deadline, func() { d.signal(syscall.SIGTERM) })
	kill := time.AfterFunc(deadline+30*time.Second, func() { _ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL) })
	go func() {
		d.err = d.cmd.Wait()
		term.Stop()
		kill.Stop()
		// the rest of its process group (Run does the same), then what
		// else is left on the node: both may hold the pipe
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		d.left = d.reapNamespace()
		select {
		case <-copied: // EOF: every holder of the pipe is gone
		case <-time.After(10 * time.Second):
			pr.Close()
			<-copied
		}
		pr.Close()
		fmt.Fprintf(logf, "%s e2e: ended: %v\n", stamp(time.Now()), d.err)
		logf.Close()
		close(d.done)
	}()
	return d, nil
}

func stamp(t time.Time) string { return t.Format("15:04:05.000") }

func (d *Daemon) signal(s syscall.Signal) { _ = d.cmd.Process.Signal(s) }

// namespace reads the process's mount namespace once it differs from
// ours (lab/node unshares first thing), within a few seconds.
func (d *Daemon) namespace() string {
	ours, _ := os.Readlink("/proc/self/ns/mnt")
	for i := 0; i < 50; i++ {
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", d.cmd.Process.Pid))
		if err != nil {
			return ""
		}
		if ns != ours {
			return ns
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// Stopped is how a Stop went.
type Stopped struct {
	Err    error         // the exit error (dying of the SIGTERM is a clean stop)
	Took   time.Duration // from SIGTERM to the end
	Killed bool          // it outlived the grace and got SIGKILL
	Left   []string      // processes still in the node's namespace (killed): "PID command line"
}

// Stop sends SIGTERM and waits, at most grace, then SIGKILLs the group.
// Once the daemon has ended, what is left in the node's namespace is
// killed by PID (the daemon should have stopped its children).
func (d *Daemon) Stop(grace time.Duration) Stopped {
	t0 := time.Now()
	d.signal(syscall.SIGTERM)
	var s Stopped
	select {
	case <-d.done:
	case <-time.After(grace):
		s.Killed = true
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
	s.Took, s.Err, s.Left = time.Since(t0), d.err, d.left
	return s
}

// reapNamespace kills, by PID, what still runs in the daemon's mount
// namespace (nothing else can be there: lab/node made it for the daemon).
func (d *Daemon) reapNamespace() []string {
	if d.mntNS == "" {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var left []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && ns == d.mntNS {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			_ = syscall.Kill(pid, syscall.SIGKILL)
			left = append(left, fmt.Sprintf("%d %s", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
		}
	}
	return left
}

// Exited tells whether the process has ended.
func (d *Daemon) Exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Lines returns the output so far.
func (d *Daemon) Lines() []Line {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Line(nil), d.lines...)
}

// WaitFor polls the output until ok says yes, the process ends or
// timeout passes.
func (d *Daemon) WaitFor(timeout time.Duration, what string, ok func([]Line) bool) error {
	end := time.Now().Add(timeout)
	for {
		if ok(d.Lines()) {
			return nil
		}
		if d.Exited() {
			return fmt.Errorf("waiting for %s: the daemon ended: %v", what, d.err)
		}
		if time.Now().After(end) {
			return fmt.Errorf("waiting for %s: not after %s", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var errNoLine = errors.New("no such line")

// firstAfter is the first line at or after t containing s.
func firstAfter(lines []Line, t time.Time, s string) (Line, error) {
	for _, l := range lines {
		if !l.At.Before(t) && strings.Contains(l.Text, s) {
			return l, nil
		}
	}
	return Line{}, fmt.Errorf("%w: %q after %s", errNoLine, s, stamp(t))
}
