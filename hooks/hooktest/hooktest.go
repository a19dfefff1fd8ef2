// Package hooktest is what the hooks' tests share: a recording fake tool
// (the test binary itself, started through a link named after the tool,
// like the reference's tests/config-tool-fake.py), running a hook as
// heat-config does, and golden files.
package hooktest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
)

// The variables the fake tool reads (the reference's names).
const (
	// StateVar is where the fake records its call; repeated calls go to
	// <path>_1, <path>_2, ...
	StateVar = "TEST_STATE_PATH"
	// ResponseVar is a Response as JSON, or a list of them, one per call.
	ResponseVar = "TEST_RESPONSE"
	roleVar     = "HOOKTEST_ROLE"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Main is a hook package's TestMain. Started by a hook as a fake tool, the
// test binary plays the tool; started by RunProcess, it runs h as the
// hook's process; else it runs the tests.
func Main(m *testing.M, h hooks.Hook) {
	switch os.Getenv(roleVar) {
	case "tool":
		os.Exit(fakeTool())
	case "hook":
		err := hooks.Main(context.Background(), h, os.Args[1:], hooks.ProcessEnv())
		os.Exit(exitcode.Of(err))
	}
	os.Exit(m.Run())
}

// Response is what the fake tool does when called.
type Response struct {
	Stdout     string            `json:"stdout,omitempty"`
	Stderr     string            `json:"stderr,omitempty"`
	Returncode int               `json:"returncode,omitempty"`
	Files      map[string]string `json:"files,omitempty"`
	// Sleep is seconds to wait before answering (SIGTERM ends it).
	Sleep float64 `json:"sleep,omitempty"`
}

// State is what the fake tool recorded of one call.
type State struct {
	Args  []string          `json:"args"`
	Env   map[string]string `json:"env"`
	Stdin string            `json:"stdin"`
	Cwd   string            `json:"cwd"`
}

// Tool makes a fake tool called name in dir and returns its path.
func Tool(t testing.TB, dir, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.Symlink(self, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Environ is a hook's environment for a test: PATH (binDir first, then
// the system's), the fake's role and state path, the response, and vars
// ("NAME=value" each; a later one replaces an earlier one).
func Environ(t testing.TB, binDir, statePath string, resp any, vars ...string) []string {
	t.Helper()
	env := []string{
		"PATH=" + binDir + ":/usr/local/bin:/usr/bin:/bin",
		roleVar + "=tool",
		StateVar + "=" + statePath,
		// Under -race the fake would sleep a second at exit.
		"GORACE=atexit_sleep_ms=0",
	}
	if resp != nil {
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, ResponseVar+"="+string(b))
	}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		env = environ.With(env, k, v)
	}
	return env
}

// ReadState reads the fake's record of call n (0 is the first).
func ReadState(t testing.TB, statePath string, n int) State {
	t.Helper()
	p := statePath
	if n > 0 {
		p = fmt.Sprintf("%s_%d", statePath, n)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("the tool was not called (%d): %v", n, err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Calls is the number of calls the fake recorded.
func Calls(statePath string) int {
	n := 0
	for {
		p := statePath
		if n > 0 {
			p = fmt.Sprintf("%s_%d", statePath, n)
		}
		if _, err := os.Stat(p); err != nil {
			return n
		}
		n++
	}
}

func fakeTool() int {
	base := os.Getenv(StateVar)
	statePath, n := base, 0
	for {
		if _, err := os.Stat(statePath); err != nil {
			break
		}
		n++
		statePath = base + "_" + strconv.Itoa(n)
	}
	stdin, _ := io.ReadAll(os.Stdin)
	cwd, _ := os.Getwd()
	st := State{Args: os.Args, Env: map[string]string{}, Stdin: string(stdin), Cwd: cwd}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		st.Env[k] = v
	}
	b, _ := json.Marshal(st)
	if err := os.WriteFile(statePath, b, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "fake tool:", err)
		return 99
	}
	raw, ok := os.LookupEnv(ResponseVar)
	if !ok {
		return 0
	}
	var r Response
	if strings.HasPrefix(strings.TrimSpace(raw), "[") {
		var list []Response
		if err := json.Unmarshal([]byte(raw), &list); err != nil || n >= len(list) {
			fmt.Fprintln(os.Stderr, "fake tool: no response for call", n, err)
			return 99
		}
		r = list[n]
	} else if err := json.Unmarshal([]byte(raw), &r); err != nil {
		fmt.Fprintln(os.Stderr, "fake tool:", err)
		return 99
	}
	for p, content := range r.Files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fake tool:", err)
			return 99
		}
	}
	time.Sleep(time.Duration(r.Sleep * float64(time.Second)))
	os.Stdout.WriteString(r.Stdout)
	os.Stderr.WriteString(r.Stderr)
	return r.Returncode
}

// Result is what a hook's process left: its stdout, its log and its exit
// status.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// JSON decodes the result's stdout into a map (for checks that ignore
// key order; Golden pins the bytes).
func (r Result) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\nstdout: %q\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	return m
}

// FQDN is the fqdn the hooks see in tests that do not set their own.
const FQDN = "node.example.com"

// Run runs h in this process as heat-config would: stdin on stdin, the
// environment environ, `hostname -f` answering FQDN, a short grace.
func Run(t testing.TB, h hooks.Hook, stdin string, environ []string) Result {
	t.Helper()
	return RunEnv(t, h, hooks.Env{
		Stdin: strings.NewReader(stdin), Environ: environ, Grace: 2 * time.Second,
		Hostname: func(context.Context) (string, error) { return FQDN, nil },
	})
}

// RunEnv is Run with an Env of the test's making (Stdout and Stderr are
// set here).
func RunEnv(t testing.TB, h hooks.Hook, env hooks.Env) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env.Stdout, env.Stderr = &stdout, &stderr
	err := hooks.Main(context.Background(), h, nil, env)
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: exitcode.Of(err)}
}

// Process is how a hook run as a process of its own (RunProcess) ended.
type Process struct {
	Result
	// MaxRSS is the peak resident set of the hook (and of children it
	// waited for), in bytes.
	MaxRSS int64
}

// RunProcess runs the test binary as the hook's process (see Main).
func RunProcess(t testing.TB, stdin string, environ []string) Process {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(append([]string(nil), environ...), roleVar+"=hook", "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	p := Process{Result: Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.MaxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	return p
}

// Golden compares got with testdata/<name>, or rewrites it under -update.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n got: %q\nwant: %q", path, got, want)
	}
}

// Logger is a hook's logger writing the reference's lines to w.
func Logger(w io.Writer) *slog.Logger {
	return logging.New(w, logging.Options{Level: slog.LevelDebug, Prefix: logging.PythonPrefix(hooks.LoggerName), QuietAttrs: true})
}

// ReadFile is a file's content, failing t when it cannot be read.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Mode is a file's permission bits, failing t when it cannot be stat'ed.
func Mode(t testing.TB, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
