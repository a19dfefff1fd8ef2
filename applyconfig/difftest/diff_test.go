// Package difftest runs the Python reference os-apply-config and ours on the
// same cases and compares what an operator could observe: the exit status,
// stdout, the ERROR and WARNING log lines, and every file of the work
// directory afterwards (bytes, type, mode, owner, link target).
//
// Cases are txtar-style files in ../testdata/diff (see README.md there).
// The reference is /usr/bin/os-apply-config (Debian's
// python3-os-apply-config 12.0.0, installed by .ci/run); without it the
// tests skip, unless REQUIRE_REFERENCE=1, when they fail.
package difftest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	refBin  = envOr("OAC_REFERENCE", "/usr/bin/os-apply-config")
	oursBin string
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "oac-difftest")
	if err != nil {
		panic(err)
	}
	oursBin = filepath.Join(dir, "os-apply-config")
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "tripleo-agent"), "github.com/tripleo-go/agent/cmd/tripleo-agent")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building the agent: " + err.Error())
	}
	if err := os.Symlink("tripleo-agent", oursBin); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Case is one parsed case file.
type Case struct {
	Name    string
	Comment string
	Args    []string
	Env     []string
	Setup   string
	Flags   map[string]bool
	Files   map[string][]byte
}

var special = map[string]bool{"args": true, "env": true, "setup": true, "flags": true}

// parseCase reads the txtar layout: a comment, then "-- name --" sections.
func parseCase(name string, data []byte) (*Case, error) {
	c := &Case{Name: name, Flags: map[string]bool{}, Files: map[string][]byte{}}
	var cur string
	var buf []byte
	have := false
	flush := func() {
		if !have {
			c.Comment = string(buf)
			return
		}
		switch cur {
		case "args":
			c.Args = strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")
			if len(buf) == 0 {
				c.Args = nil
			}
		case "env":
			for _, l := range strings.Split(string(buf), "\n") {
				if l != "" {
					c.Env = append(c.Env, l)
				}
			}
		case "setup":
			c.Setup = string(buf)
		case "flags":
			for _, f := range strings.Fields(string(buf)) {
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
	for f := range c.Files {
		if filepath.IsAbs(f) || strings.HasPrefix(filepath.Clean(f), "..") {
			return nil, fmt.Errorf("file %q escapes the work dir", f)
		}
	}
	return c, nil
}

// Outcome is everything compared for one run.
type Outcome struct {
	Code   int
	Stdout string
	Logged []string // ERROR and WARNING lines, timestamps removed
	Tree   []string // one line per path
	Stderr string   // for failure messages only
}

var timestamp = regexp.MustCompile(`^\[\d{4}/\d\d/\d\d \d\d:\d\d:\d\d [AP]M\] `)

func (c *Case) run(t *testing.T, bin string) Outcome {
	t.Helper()
	dir := t.TempDir()
	for name, body := range c.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=/root"}, c.Env...)
	if c.Setup != "" {
		setup := exec.Command("/bin/sh", "-ec", c.Setup)
		setup.Dir, setup.Env = dir, env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.Args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := Outcome{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", bin, err)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		l = timestamp.ReplaceAllString(l, "")
		if strings.HasPrefix(l, "[ERROR] ") || strings.HasPrefix(l, "[WARNING] ") {
			o.Logged = append(o.Logged, l)
		}
	}
	o.Tree = snapshot(t, dir)
	return o
}

// snapshot describes every path under dir.
func snapshot(t *testing.T, dir string) []string {
	var out []string
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
			line += " -> " + target
		case st.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(data) <= 200 {
				line += fmt.Sprintf(" %q", data)
			} else {
				line += fmt.Sprintf(" %d bytes sha256:%x", len(data), sha256.Sum256(data))
			}
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func loadCases(t *testing.T) []*Case {
	paths, err := filepath.Glob("../testdata/diff/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := parseCase(strings.TrimSuffix(filepath.Base(p), ".txtar"), data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		cases = append(cases, c)
	}
	return cases
}

func requireReference(t *testing.T) {
	if _, err := os.Stat(refBin); err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("reference %s missing: %v", refBin, err)
		}
		t.Skipf("reference %s not installed", refBin)
	}
	if os.Geteuid() != 0 {
		t.Skip("the cases set owners and groups: run as root")
	}
}

func TestAgainstReference(t *testing.T) {
	requireReference(t)
	cases := loadCases(t)
	if len(cases) < 60 {
		t.Errorf("only %d cases; the corpus must have at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ref := c.run(t, refBin)
			if strings.Contains(ref.Stderr, "Traceback") && !c.Flags["ignore-stderr"] {
				t.Fatalf("the reference crashed on this case; flag it or move it to the compat tests:\n%s", ref.Stderr)
			}
			ours := c.run(t, oursBin)
			compare(t, c, ref, ours)
		})
	}
}

func compare(t *testing.T, c *Case, ref, ours Outcome) {
	t.Helper()
	if ref.Code != ours.Code {
		t.Errorf("exit status: reference %d, ours %d", ref.Code, ours.Code)
	}
	if ref.Stdout != ours.Stdout {
		t.Errorf("stdout:\nreference %q\nours      %q", ref.Stdout, ours.Stdout)
	}
	if !c.Flags["ignore-stderr"] {
		// Ours may add detail after the reference's words, never drop them.
		ok := len(ref.Logged) == len(ours.Logged)
		for i := 0; ok && i < len(ref.Logged); i++ {
			ok = strings.HasPrefix(ours.Logged[i], ref.Logged[i])
		}
		if !ok {
			t.Errorf("log lines:\nreference %q\nours      %q", ref.Logged, ours.Logged)
		}
	}
	if d := diffLines(ref.Tree, ours.Tree); d != "" {
		t.Errorf("work dir differs (- reference, + ours):\n%s", d)
	}
	if t.Failed() {
		t.Logf("reference stderr:\n%s\nour stderr:\n%s", ref.Stderr, ours.Stderr)
	}
}

func diffLines(a, b []string) string {
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
