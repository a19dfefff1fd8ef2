package difftest

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

//go:embed zygote.py
var zygoteScript []byte

// Zygote runs a Python reference program by forking a process that has
// already imported it (zygote.py says how): the imports are most of the
// time of a run of os-collect-config (1.5 s of CPU), paid once per test
// binary instead of once per run, and each run starts from the state
// right after them, as a fresh process would. Its runs are made by the
// test binary itself as a shim (ZygoteShim), given as the program to the
// cases' steps: Program is the path to run, with Env in its environment.
type Zygote struct {
	cmd     *exec.Cmd
	dir     string
	Program string
	Env     []string
}

// zygotes are the zygotes started, which Main stops.
var zygotes []*Zygote

// zygoteVar tells the test binary to act as the shim; it holds the socket.
const zygoteVar = "DIFFTEST_ZYGOTE_SOCKET"

// StartZygote starts /usr/bin/python3 with module's function as the
// program's entry point (a console script's), argv0 as its sys.argv[0],
// and prepares a link named name to the running test binary as Program.
// With preload, the zygote imports those modules instead, and each run
// imports module: for one that reads the environment or sets logging up
// as it is imported.
// Main stops it after the tests.
func StartZygote(module, function, argv0, name string, preload ...string) (*Zygote, error) {
	dir, err := os.MkdirTemp("", "zygote")
	if err != nil {
		return nil, err
	}
	z := &Zygote{dir: dir}
	script := filepath.Join(dir, "zygote.py")
	sock := filepath.Join(dir, "socket")
	exe, err := os.Executable()
	if err == nil {
		err = os.WriteFile(script, zygoteScript, 0o644)
	}
	if err == nil {
		z.Program = filepath.Join(dir, name)
		err = os.Symlink(exe, z.Program)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	z.Env = []string{zygoteVar + "=" + sock}
	z.cmd = exec.Command("/usr/bin/python3", append([]string{script, sock, module, function, argv0}, preload...)...)
	z.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=" + dir}
	z.cmd.Stderr = os.Stderr
	// Gone with the test binary, should it die before Main stops it.
	z.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := z.cmd.StdoutPipe()
	if err == nil {
		err = z.cmd.Start()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		z.Close()
		return nil, fmt.Errorf("zygote of %s: %q, %v", module, line, err)
	}
	zygotes = append(zygotes, z)
	return z, nil
}

// Close stops the zygote and removes its directory.
func (z *Zygote) Close() {
	if z.cmd.Process != nil {
		z.cmd.Process.Kill()
		z.cmd.Wait()
	}
	os.RemoveAll(z.dir)
}

// ZygoteShim, called first in TestMain, makes the test binary the
// program when it runs as a Zygote's Program: it hands its stdio,
// arguments, environment (less the shim's variable), directory and umask
// to the zygote, passes the signals it gets on to the run, and ends as
// the run did. It returns when the binary is not run as the shim.
func ZygoteShim() {
	sock := os.Getenv(zygoteVar)
	if sock == "" {
		return
	}
	os.Unsetenv(zygoteVar)
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "difftest zygote shim: %v\n", err)
		os.Exit(125)
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		fail(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	req, _ := json.Marshal(map[string]any{"args": os.Args[1:], "env": os.Environ(), "cwd": cwd, "umask": umask})
	if _, _, err := conn.WriteMsgUnix(append(req, '\n'), syscall.UnixRights(0, 1, 2), nil); err != nil {
		fail(err)
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
	if err != nil || perr != nil {
		fail(fmt.Errorf("no run started: %q %v", line, err))
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sigs {
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	line, err = r.ReadString('\n')
	if err != nil {
		fail(fmt.Errorf("the run of pid %d: %v", pid, err))
	}
	kind, n, _ := strings.Cut(strings.TrimSpace(line), " ")
	code, err := strconv.Atoi(n)
	if err != nil {
		fail(fmt.Errorf("the run of pid %d ended with %q", pid, line))
	}
	if kind == "signal" {
		// Die of the same signal, as the shell that ran us must see.
		// Delivered asynchronously: wait for it, then exit as a shell
		// reports such a death, should it not come.
		signal.Reset()
		syscall.Kill(os.Getpid(), syscall.Signal(code))
		time.Sleep(time.Second)
		code += 128
	}
	os.Exit(code)
}
