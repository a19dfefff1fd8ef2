package lazyfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Proc is a process tree to run against a mount, as a node would run it:
// in its own PID namespace (killing its first process kills them all, as
// a power cut stops every process at once) and, given a Root, chrooted
// there with some host directories bound in (the programs, /usr, /dev).
type Proc struct {
	Args []string // Args[0] is looked up in Env's PATH, inside Root
	Env  []string
	Dir  string // working directory (inside Root)
	// Root, if set, is the directory the processes see as /.
	Root  string
	Binds []Bind
	// MountProc mounts a /proc of the PID namespace at Root/proc.
	MountProc      bool
	Stdout, Stderr io.Writer `json:"-"`
}

// Bind makes a host directory (or file) visible at At under Root.
type Bind struct {
	Host, At string
	Writable bool
}

// Running is a started Proc.
type Running struct {
	cmd  *exec.Cmd
	stop chan struct{}
	done chan struct{}
	err  error
}

const launchVar = "LAZYFS_LAUNCH"

// Launched must be called first in TestMain of a test binary that calls
// Start: Start runs the binary again as the launcher of its processes,
// and Launched then does the launcher's work and never returns.
func Launched() {
	if spec := os.Getenv(launchVar); spec != "" {
		err := launch(spec)
		fmt.Fprintln(os.Stderr, "lazyfs launcher:", err)
		os.Exit(127)
	}
}

// Start starts p. Its syncfs and sync calls make m's contents durable.
func (m *Mount) Start(p Proc) (*Running, error) {
	spec, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "lazyfs-listener"), os.NewFile(uintptr(pair[1]), "lazyfs-launcher")
	defer ours.Close()
	self, err := os.Executable()
	if err != nil {
		theirs.Close()
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), launchVar+"="+string(spec))
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if p.Root != "" {
		cmd.SysProcAttr.Unshareflags = syscall.CLONE_NEWNS
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		return nil, err
	}
	r := &Running{cmd: cmd, stop: make(chan struct{}), done: make(chan struct{})}
	listener, err := receiveFD(int(ours.Fd()))
	if err != nil {
		// The launcher failed before its filter: its error is on Stderr.
		cmd.Process.Kill()
		werr := cmd.Wait()
		return nil, fmt.Errorf("lazyfs: starting %s: %v (%v)", strings.Join(p.Args, " "), err, werr)
	}
	var serving sync.WaitGroup
	serving.Add(1)
	go func() {
		defer serving.Done()
		serveSyncs(listener, m.Sync, r.stop)
	}()
	go func() {
		r.err = cmd.Wait()
		close(r.stop)
		serving.Wait()
		close(r.done)
	}()
	return r, nil
}

// Kill kills every process of the tree at once (SIGKILL to the first
// one, which takes its PID namespace down with it).
func (r *Running) Kill() { r.cmd.Process.Signal(syscall.SIGKILL) }

// Wait waits until every process of the tree is gone and returns how the
// first one ended.
func (r *Running) Wait() error {
	<-r.done
	return r.err
}

// Done is closed when every process of the tree is gone.
func (r *Running) Done() <-chan struct{} { return r.done }

func receiveFD(sock int) (int, error) {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, 0)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, errors.New("the launcher sent no listener")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, errors.New("the launcher sent no listener")
	}
	return fds[0], nil
}

// launch is the launcher: the first process of a new PID namespace (and,
// with a Root, of a new mount namespace, private). It sets the view up,
// installs the filter, hands its listener to Start over fd 3 and execs
// the program.
func launch(spec string) error {
	var p Proc
	if err := json.Unmarshal([]byte(spec), &p); err != nil {
		return err
	}
	runtime.LockOSThread() // the filter is the thread's; this thread execs
	if p.Root != "" {
		for _, b := range p.Binds {
			at := filepath.Join(p.Root, b.At)
			if err := unix.Mount(b.Host, at, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s on %s: %w", b.Host, at, err)
			}
			if !b.Writable {
				if err := unix.Mount("", at, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
					return fmt.Errorf("read-only %s: %w", at, err)
				}
			}
		}
		if p.MountProc {
			if err := unix.Mount("proc", filepath.Join(p.Root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
				return fmt.Errorf("mount /proc: %w", err)
			}
		}
		if err := unix.Chroot(p.Root); err != nil {
			return err
		}
		if err := unix.Chdir("/"); err != nil {
			return err
		}
	}
	if p.Dir != "" {
		if err := unix.Chdir(p.Dir); err != nil {
			return err
		}
	}
	path := p.Args[0]
	if !strings.Contains(path, "/") {
		for _, kv := range p.Env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				os.Setenv("PATH", v)
			}
		}
		var err error
		if path, err = exec.LookPath(path); err != nil {
			return err
		}
	}
	listener, err := installSyncFilter()
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(3, []byte{0}, unix.UnixRights(listener), nil, 0); err != nil {
		return fmt.Errorf("handing the listener over: %w", err)
	}
	unix.Close(listener)
	unix.Close(3)
	return unix.Exec(path, p.Args, p.Env)
}
