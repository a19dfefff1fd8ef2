// Package hostile runs the programs, as built, on hostile metadata and
// files: keys and ids that try to leave their directory or break a log
// line, template and output trees with symbolic links, FIFOs, nesting too
// deep for a recursive parser, values of 100 MB, an .oac owner that does
// not exist, and a full disk. Each case must end with one error line
// naming the key or the file, the exit status docs/exit-codes.md gives,
// nothing written outside where it belongs and, on a full disk, the old
// files and the cache's committed state as they were.
//
// Everything runs under t.TempDir(); the full disk is a small ext4 image
// on a loop device of the test's own (root only), filled by a ballast
// file at HOSTILE_DISK_STEPS levels in turn (24; make torture: 1000).
// Under -short nothing runs: the agent has to be built.
package hostile

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// The programs the cases run, as links to the one binary.
var agent = difftest.NewSharedAgent("os-apply-config", "os-collect-config", "55-heat-config",
	"heat-config-notify", "script", "hiera", "json-file")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	agent.Remove()
	os.Exit(code)
}

// result is how a program ended.
type result struct {
	code           int
	stdout, stderr string
}

// lines are the lines of stderr that hold word: an error's, in the
// programs' formats (the Python-style "[ERROR]", os-collect-config's
// plain lines, which the tests tell by their words).
func (r result) lines(word string) []string {
	var out []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return out
}

// run runs program (a link in the agent's directory, or an absolute
// path) with env added to a minimal environment, stdin and args, under a
// deadline: a case that hangs (a FIFO opened for reading) fails instead
// of stalling the suite.
func run(t *testing.T, env []string, stdin []byte, program string, args ...string) result {
	t.Helper()
	bin := program
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(agent.Dir(t), program)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + agent.Dir(t) + ":/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s %s: still running after 2 minutes\n%s", program, strings.Join(args, " "), stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// tree lists every path under root (relative, "/"-separated; directories
// end with "/"), to see what a run wrote and where.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// onlyUnder fails the test for each path of paths (from tree) that is not
// under one of dirs ("x/" prefixes) nor one of the paths in before.
func onlyUnder(t *testing.T, paths, before []string, dirs ...string) {
	t.Helper()
	for _, p := range paths {
		if slices.Contains(before, p) || slices.Contains(dirs, p) {
			continue
		}
		if !slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d) }) {
			t.Errorf("written where it does not belong: %q", p)
		}
	}
}

func write(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nested is a JSON document nesting depth lists (or objects) inside key.
func nested(depth int, objects bool) []byte {
	open, close := "[", "]"
	if objects {
		open, close = `{"a": `, "}"
	}
	var b bytes.Buffer
	b.WriteString(`{"x": `)
	b.WriteString(strings.Repeat(open, depth))
	if objects {
		b.WriteString("1")
	}
	b.WriteString(strings.Repeat(close, depth))
	b.WriteString("}")
	return b.Bytes()
}
