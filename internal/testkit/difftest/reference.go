package difftest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Reference is an oracle script run as a co-process with
// /usr/bin/python3: one JSON case per line on its stdin, one JSON answer
// per line on its stdout. The fuzz targets' seed tests ask it about
// every seed; with FUZZ_REFERENCE=1 a fuzz target asks it about every
// input it tries, so that fuzzing looks for differences from the
// reference and not only for broken properties.
type Reference struct {
	script string
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	reader *bufio.Reader
	stderr *tailBuffer
}

// tailBuffer keeps the end of what the reference wrote on stderr (its
// traceback), for the message when it dies.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 4096 {
		b.buf = b.buf[len(b.buf)-4096:]
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// ErrSlow is the answer to a case the reference took longer than
// AskTimeout over (pystache's regular expression backtracks for minutes
// on some templates): the process is replaced and the case is not
// compared.
var ErrSlow = errors.New("the reference took too long")

// AskTimeout bounds one answer.
const AskTimeout = 10 * time.Second

// StartReference starts script (a path relative to the test's package)
// once module imports; without it the test is skipped, or fails with
// REQUIRE_REFERENCE=1. The process ends with the test.
func StartReference(t testing.TB, script, module string) *Reference {
	t.Helper()
	RequirePythonModule(t, module)
	r := &Reference{script: script}
	if err := r.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.stop()
	})
	return r
}

func (r *Reference) start() error {
	cmd := exec.Command(PythonPath, r.script)
	cmd.Env = []string{"LANG=C.UTF-8", "PATH=/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1"}
	r.stderr = &tailBuffer{}
	cmd.Stderr = r.stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("starting %s: %w", r.script, err)
	}
	r.cmd, r.stdin, r.stdout, r.reader = cmd, inW, outR, bufio.NewReaderSize(outR, 1<<20)
	return nil
}

func (r *Reference) stop() {
	r.stdin.Close()
	r.stdout.Close()
	r.cmd.Process.Kill()
	r.cmd.Wait()
}

// FuzzReference is StartReference when FUZZ_REFERENCE=1, else nil: the
// fuzz target then checks its properties only.
func FuzzReference(f *testing.F, script, module string) *Reference {
	if os.Getenv("FUZZ_REFERENCE") != "1" {
		return nil
	}
	return StartReference(f, script, module)
}

// Ask sends one case and decodes the answer into out; ErrSlow when it
// took longer than AskTimeout.
func (r *Reference) Ask(in, out any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	line, err := json.Marshal(in)
	if err != nil {
		return err
	}
	r.stdin.SetWriteDeadline(time.Now().Add(AskTimeout))
	r.stdout.SetReadDeadline(time.Now().Add(AskTimeout))
	if _, err := r.stdin.Write(append(line, '\n')); err != nil {
		return r.failed("writing to", err)
	}
	answer, err := r.reader.ReadBytes('\n')
	if err != nil {
		return r.failed("reading the answer of", err)
	}
	return json.Unmarshal(answer, out)
}

// failed replaces a reference that timed out or died, and reports how
// it broke.
func (r *Reference) failed(what string, err error) error {
	slow := errors.Is(err, os.ErrDeadlineExceeded)
	r.stop()
	if !slow {
		err = fmt.Errorf("%s the reference: %w (%s %v)\n%s", what, err, r.script, r.cmd.ProcessState, r.stderr)
	}
	if serr := r.start(); serr != nil {
		return serr
	}
	if slow {
		return ErrSlow
	}
	return err
}

// Query is Ask for a test: false when the reference was too slow to
// compare with (the case is skipped), and any other failure fails t.
func (r *Reference) Query(t testing.TB, in, out any) bool {
	t.Helper()
	err := r.Ask(in, out)
	if errors.Is(err, ErrSlow) {
		t.Logf("reference too slow, not compared: %v", in)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// RequirePythonModule skips a test that runs a module of the reference
// (or one it depends on) with /usr/bin/python3 as its oracle when the
// module cannot be imported, or fails it with REQUIRE_REFERENCE=1, as in
// CI. Like Oracle, it skips under -short.
func RequirePythonModule(t testing.TB, module string) {
	t.Helper()
	Oracle(t)
	if out, err := exec.Command(PythonPath, "-c", "import "+module).CombinedOutput(); err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("reference module %s not importable: %v\n%s", module, err, out)
		}
		t.Skipf("reference module %s not installed", module)
	}
}

// PythonPath is the interpreter the reference runs with.
const PythonPath = "/usr/bin/python3"
