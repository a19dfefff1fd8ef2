// Package difftest holds what the differential test suites share: the
// case file format (a txtar-like file: a comment, then "-- name --"
// sections for args, env, setup, flags and the files of the work dir),
// tree snapshots, and the checks for the reference being installed. Each
// program's suite (applyconfig/difftest, refresh/difftest) runs its cases
// with the reference and ours and compares what an operator would see.
package difftest

import (
	"bytes"
	"crypto/sha256"
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

// BuildAgent builds the multi-call binary into a new directory with a link
// for each program name, for a suite's TestMain. The caller removes dir.
func BuildAgent(programs ...string) (dir string, err error) {
	dir, err = os.MkdirTemp("", "agent-difftest")
	if err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "tripleo-agent"), "github.com/tripleo-go/agent/cmd/tripleo-agent")
	build.Stderr = os.Stderr
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as make build
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building the agent: %w", err)
	}
	for _, p := range programs {
		if err := os.Symlink("tripleo-agent", filepath.Join(dir, p)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// RequireReference skips the test when a reference program is missing
// (fails instead with REQUIRE_REFERENCE=1, as in CI) or when not root
// (the cases set owners and rely on root's execute permission).
func RequireReference(t testing.TB, bins ...string) {
	t.Helper()
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
