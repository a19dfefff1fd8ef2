package difftest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	ZygoteShim()
	os.Exit(m.Run())
}

// A run through the zygote is a run of the program: its stdin, stdout,
// stderr, arguments, directory and exit status are the shim's, and a
// signal to the shim reaches it and kills the shim too; runs may
// overlap. Python's
// json.tool stands in for a reference program.
func TestZygoteRunsAsTheProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Python; the suites that use a zygote do not run with -short either")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	for _, preload := range [][]string{nil, {"argparse", "json"}} {
		t.Run(fmt.Sprintf("preload %v", preload), func(t *testing.T) { testZygote(t, preload) })
	}
}

func testZygote(t *testing.T, preload []string) {
	z, err := StartZygote("json.tool", "main", "/usr/bin/json-tool", "json-tool", preload...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.json"), []byte(`{"b": [1, 2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (string, string, error) {
		cmd := exec.Command(z.Program, args...)
		cmd.Dir, cmd.Env = dir, z.Env
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		stdout      string
		stderr      string // contained
		code        int
	}{
		{"stdin to stdout", `{"a": 1}`, nil, "{\n    \"a\": 1\n}\n", "", 0},
		{"a file of its directory, an option", "", []string{"--compact", "in.json"}, `{"b":[1,2]}` + "\n", "", 0},
		{"exit status and stderr", `{"a": `, nil, "", "Expecting value", 1},
		{"arguments refused", "", []string{"--no-such-option"}, "", "unrecognized arguments: --no-such-option", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := run(tc.stdin, tc.args...)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if stdout != tc.stdout || code != tc.code || !strings.Contains(stderr, tc.stderr) || tc.stderr == "" && stderr != "" {
				t.Errorf("stdout %q, stderr %q, exit %d; want %q, %q, %d", stdout, stderr, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
	t.Run("signal", func(t *testing.T) {
		cmd := exec.Command(z.Program)
		cmd.Dir, cmd.Env = dir, z.Env
		stdin, err := cmd.StdinPipe() // left open: the run waits on it
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the run started (a signal before is forwarded too, or kills the shim)
		// Runs overlap: another ends while this one waits.
		if stdout, stderr, err := run(`[]`); stdout != "[]\n" || err != nil {
			t.Errorf("a run beside a waiting one: stdout %q, stderr %q, %v", stdout, stderr, err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		err = cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("wait status %v (%v), want death by SIGTERM", ws, err)
		}
	})
}
