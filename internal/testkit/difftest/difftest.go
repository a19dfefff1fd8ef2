// Package difftest holds what the differential test suites share: the
// case file format (a txtar-like file: a comment, then "-- name --"
// sections for args, env, setup, flags and the files of the work dir),
// tree snapshots, the comparison of two runs, the agent's build, the
// checks for the reference being installed, and, for the fuzz targets,
// their corpora (FuzzCorpus) and the reference's modules asked as a
// co-process (Reference). Each program's suite
// (applyconfig/difftest, refresh/difftest, collectors/difftest) runs its
// cases with the reference and ours and compares what an operator would
// see.
package difftest

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// Case is one parsed case file.
type Case struct {
	Name    string
	Comment string
	Args    []string
	Env     []string // NAME=value sets, -NAME removes
	Setup   string
	Flags   map[string]bool
	Files   map[string][]byte
}

// Parse reads the txtar layout: a comment, then "-- name --" sections.
func Parse(name string, data []byte, knownFlags map[string]bool) (*Case, error) {
	c := &Case{Name: name, Flags: map[string]bool{}, Files: map[string][]byte{}}
	var cur string
	var buf []byte
	have := false
	seen := map[string]bool{}
	var err error
	flush := func() {
		if !have {
			c.Comment = string(buf)
			return
		}
		if seen[cur] && err == nil {
			err = fmt.Errorf("section %q appears twice", cur)
		}
		seen[cur] = true
		switch cur {
		case "args":
			if len(buf) > 0 {
				c.Args = strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
			}
		case "env":
			for _, l := range strings.Split(string(buf), "\n") {
				if l == "" {
					continue
				}
				if !strings.HasPrefix(l, "-") && !strings.Contains(l, "=") && err == nil {
					err = fmt.Errorf("env line %q is neither NAME=value nor -NAME", l)
				}
				c.Env = append(c.Env, l)
			}
		case "setup":
			c.Setup = string(buf)
		case "flags":
			for _, f := range strings.Fields(string(buf)) {
				if !knownFlags[f] && err == nil {
					err = fmt.Errorf("unknown flag %q", f)
				}
				c.Flags[f] = true
			}
		default:
			c.Files[cur] = append([]byte(nil), buf...)
		}
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		l := strings.TrimRight(string(line), "\n")
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			flush()
			cur, buf, have = strings.TrimSpace(l[3:len(l)-3]), nil, true
			continue
		}
		buf = append(buf, line...)
	}
	flush()
	if err != nil {
		return nil, err
	}
	for f := range c.Files {
		if filepath.IsAbs(f) || f == "." || strings.HasPrefix(filepath.Clean(f), "..") {
			return nil, fmt.Errorf("file %q escapes the work dir", f)
		}
	}
	return c, nil
}

// Load parses every *.txtar file matching glob.
func Load(t testing.TB, glob string, knownFlags map[string]bool) []*Case {
	t.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Parse(strings.TrimSuffix(filepath.Base(p), ".txtar"), data, knownFlags)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// Snapshot describes every path under dir, one sorted line each: type,
// mode (set-id and sticky bits included), owner, and a regular file's
// bytes (quoted up to 4 KiB, else size and hash) or a link's target. Each
// occurrence of replace (when not empty) in contents and targets reads
// "W", so paths that scripts record compare equal across work dirs. It
// also returns the files' contents by relative path.
func Snapshot(dir, replace string) ([]string, map[string]string, error) {
	var out []string
	files := map[string]string{}
	norm := func(s string) string {
		if replace == "" {
			return s
		}
		return strings.ReplaceAll(s, replace, "W")
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		line := fmt.Sprintf("%s %s %04o %d:%d", rel, st.Mode().Type(), sys.Mode&0o7777, sys.Uid, sys.Gid)
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + norm(target)
		case st.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := norm(string(data))
			files[rel] = s
			if len(s) <= 4096 {
				line += fmt.Sprintf(" %q", s)
			} else {
				line += fmt.Sprintf(" %d bytes sha256:%x", len(s), sha256.Sum256([]byte(s)))
			}
		}
		out = append(out, line)
		return nil
	})
	sort.Strings(out)
	return out, files, err
}

// SetDiff lists the lines only in a (-) and only in b (+).
func SetDiff(a, b []string) string {
	inA := map[string]bool{}
	for _, l := range a {
		inA[l] = true
	}
	inB := map[string]bool{}
	for _, l := range b {
		inB[l] = true
	}
	var out strings.Builder
	for _, l := range a {
		if !inB[l] {
			fmt.Fprintf(&out, "- %s\n", l)
		}
	}
	for _, l := range b {
		if !inA[l] {
			fmt.Fprintf(&out, "+ %s\n", l)
		}
	}
	return out.String()
}

// BuildAgent builds the multi-call binary into dir as make build does
// (static), with a link named after each program: the one way tests that
// run the agent as a process get it.
func BuildAgent(dir string, programs ...string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(cmp.Or(os.Getenv("GOROOT"), "/usr/local/go"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-trimpath", "-o", filepath.Join(dir, "tripleo-agent"), "github.com/tripleo-go/agent/cmd/tripleo-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the agent: %w\n%s", err, out)
	}
	for _, p := range programs {
		if err := os.Symlink("tripleo-agent", filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	return nil
}

// Main is a differential suite's TestMain. Under -short it builds
// nothing (its differential tests skip, see RequireReference) and use
// gets ""; else the agent is built with links for programs, use gets the
// directory, and it is removed after the tests.
func Main(m *testing.M, programs []string, use func(dir string)) {
	flag.Parse()
	if testing.Short() {
		use("")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "agent-difftest")
	if err == nil {
		err = BuildAgent(dir, programs...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	use(dir)
	code := m.Run()
	os.RemoveAll(dir)
	for _, z := range zygotes {
		z.Close()
	}
	os.Exit(code)
}

// RequireReference skips a differential test under -short (they are
// slow), when a reference program is missing (it fails instead with
// REQUIRE_REFERENCE=1, as in CI), or when not root (the cases set owners
// and rely on root's execute permission).
func RequireReference(t testing.TB, bins ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("differential tests are slow; not run with -short")
	}
	for _, bin := range bins {
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("REQUIRE_REFERENCE") == "1" {
				t.Fatalf("reference %s missing: %v", bin, err)
			}
			t.Skipf("reference %s not installed", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the cases need root")
	}
}

// Outcome is what a run showed, in the terms every suite compares.
type Outcome struct {
	Code   int
	Stdout string
	// Tree and Files are the work dir afterwards (see Snapshot).
	Tree  []string
	Files map[string]string
	// Stderr is the whole of it, for failure messages; each suite
	// compares its own view of it.
	Stderr string
}

// Compare reports where ours differs from ref: the exit status, stdout,
// and the work dir (with a line diff of each file that differs). When
// anything differs, both stderrs are logged.
func Compare(t testing.TB, ref, ours Outcome) {
	t.Helper()
	if ref.Code != ours.Code {
		t.Errorf("exit status: reference %d, ours %d", ref.Code, ours.Code)
	}
	if ref.Stdout != ours.Stdout {
		t.Errorf("stdout differs (- reference, + ours):\n%s", LineDiff(ref.Stdout, ours.Stdout))
	}
	if d := SetDiff(ref.Tree, ours.Tree); d != "" {
		var detail strings.Builder
		for name, r := range ref.Files {
			if o, ok := ours.Files[name]; ok && o != r {
				fmt.Fprintf(&detail, "%s (- reference, + ours):\n%s", name, LineDiff(r, o))
			}
		}
		t.Errorf("work dir differs (- reference, + ours):\n%s%s", d, detail.String())
	}
}

// LogStderr logs both stderrs when t has failed.
func LogStderr(t testing.TB, ref, ours Outcome) {
	t.Helper()
	if t.Failed() {
		t.Logf("reference stderr:\n%s\nour stderr:\n%s", ref.Stderr, ours.Stderr)
	}
}

// LineDiff is a small LCS line diff of a and b, good enough for the short
// texts compared here.
func LineDiff(a, b string) string {
	x := strings.SplitAfter(a, "\n")
	y := strings.SplitAfter(b, "\n")
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	line := func(prefix, s string) {
		if s != "" {
			fmt.Fprintf(&out, "%s%q\n", prefix, s)
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			line("  ", x[i])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			line("+ ", y[j])
			j++
		default:
			line("- ", x[i])
			i++
		}
	}
	return out.String()
}

// Tree is Snapshot for a test: a failure to read dir fails t.
func Tree(t testing.TB, dir, replace string) ([]string, map[string]string) {
	t.Helper()
	tree, files, err := Snapshot(dir, replace)
	if err != nil {
		t.Fatal(err)
	}
	return tree, files
}

// Oracle marks a test that runs the reference's own Python code as its
// oracle: it is slow, so it is skipped under -short.
func Oracle(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the reference as an oracle; not run with -short")
	}
}
