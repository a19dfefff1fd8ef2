// Package refagent runs the reference os-collect-config daemons of a
// fleet: Debian's Python agent, unchanged, one process each, released
// together through a barrier (refagent.py says how and why).
package refagent

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

//go:embed refagent.py
var wrapper []byte

// Python is Debian's interpreter, which has the reference's libraries.
const Python = "/usr/bin/python3"

// Available says why the reference cannot run here ("" when it can).
func Available() string {
	if err := exec.Command(Python, "-c", "import os_collect_config.collect").Run(); err != nil {
		return "the reference (python3-os-collect-config, make deps) is not installed: " + err.Error()
	}
	return ""
}

// Fleet is N reference daemons.
type Fleet struct {
	dir   string
	procs []*exec.Cmd
}

// Agent is one reference daemon: its directory (its log, its byte
// counts) and its arguments after the program's name.
type Agent struct {
	Dir  string
	Args []string
}

// Start starts the daemons, waits until they have imported the agent, and
// releases them at once.
func Start(dir string, agents []Agent) (*Fleet, error) {
	f := &Fleet{dir: dir}
	py := filepath.Join(dir, "refagent.py")
	if err := os.WriteFile(py, wrapper, 0o755); err != nil {
		return nil, err
	}
	barrier := filepath.Join(dir, "go")
	for _, a := range agents {
		d := a.Dir
		logf, err := os.Create(filepath.Join(d, "agent.log"))
		if err != nil {
			f.Stop()
			return nil, err
		}
		args := append([]string{py, barrier, filepath.Join(d, "counts.jsonl"), "--", "os-collect-config"}, a.Args...)
		cmd := exec.Command(Python, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = d, logf, logf
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + d, "LANG=C.UTF-8"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = cmd.Start()
		logf.Close()
		if err != nil {
			f.Stop()
			return nil, err
		}
		f.procs = append(f.procs, cmd)
	}
	// Importing keystoneclient and the rest takes seconds of CPU each; the
	// processes are ready when they sleep, waiting for the barrier.
	deadline := time.Now().Add(time.Duration(60+3*len(agents)) * time.Second)
	for !f.allWaiting() {
		if time.Now().After(deadline) {
			f.Stop()
			return nil, errors.New("the reference agents did not finish starting")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	return f, os.WriteFile(barrier, nil, 0o644)
}

// allWaiting: every process is asleep and has used no CPU for a while.
func (f *Fleet) allWaiting() bool {
	for _, p := range f.procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
		if err != nil {
			return false
		}
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if fields[0] != "S" {
			return false
		}
	}
	// sleeping now may be reading a module from disk: look twice
	time.Sleep(500 * time.Millisecond)
	for _, p := range f.procs {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", p.Process.Pid))
		if strings.Contains(string(b), "read") {
			return false
		}
	}
	return true
}

// PIDs are the daemons' processes.
func (f *Fleet) PIDs() []int {
	var out []int
	for _, p := range f.procs {
		out = append(out, p.Process.Pid)
	}
	return out
}

// Mark asks every daemon to append its byte counts so far (SIGUSR1).
func (f *Fleet) Mark() {
	for _, p := range f.procs {
		p.Process.Signal(syscall.SIGUSR1)
	}
}

// Exited names the daemons that are no longer running, with the end of
// their log.
func (f *Fleet) Exited() error {
	var errs []error
	for _, p := range f.procs {
		if syscall.Kill(p.Process.Pid, 0) == nil && !zombie(p.Process.Pid) {
			continue
		}
		log, _ := os.ReadFile(filepath.Join(p.Dir, "agent.log"))
		if len(log) > 500 {
			log = log[len(log)-500:]
		}
		errs = append(errs, fmt.Errorf("reference agent in %s exited: %s", p.Dir, log))
	}
	return errors.Join(errs...)
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || strings.Contains(string(b[strings.LastIndexByte(string(b), ')'):]), ") Z")
}

// Stop ends every daemon (SIGTERM, which appends the counts; SIGKILL to
// the process group 10 s later).
func (f *Fleet) Stop() {
	for _, p := range f.procs {
		syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
	}
	for _, p := range f.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
}

// Counts are bytes a daemon sent and received, by the server's port.
type Counts struct {
	At             float64
	Sent, Received map[string]float64
}

// ReadCounts reads the lines a daemon appended to dir/counts.jsonl.
func ReadCounts(dir string) ([]Counts, error) {
	fh, err := os.Open(filepath.Join(dir, "counts.jsonl"))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []Counts
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var c Counts
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, sc.Err()
}
