package hiera

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// The cases are metadata documents under testdata/cases/NAME, with the
// data directory as it was before (before/, optional) and as the
// reference element left it (expected/: tree.txt lists each path's type
// and mode, puppet/ holds the files; stderr, when there, our warnings).
// bad-* cases are metadata we refuse: expected/error is our one line,
// and nothing changes.
func caseNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// prepare makes a /etc/puppet directory holding the case's before/.
func prepare(t *testing.T, name, puppet string) {
	t.Helper()
	if err := os.MkdirAll(puppet, 0o755); err != nil {
		t.Fatal(err)
	}
	before := filepath.Join("testdata/cases", name, "before")
	if _, err := os.Stat(before); err != nil {
		return
	}
	if out, err := exec.Command("cp", "-a", before+"/.", puppet).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	// git keeps no modes: the before trees' are set here.
	for path, mode := range map[string]os.FileMode{"hieradata": 0o700, "hieradata/common.yaml": 0o600} {
		if _, err := os.Stat(filepath.Join(puppet, path)); err == nil {
			os.Chmod(filepath.Join(puppet, path), mode)
		}
	}
}

type result struct {
	code           int
	stdout, stderr string
}

// runOurs runs the program on the case with NODECONFIG_ROOT at root.
func runOurs(t *testing.T, name, root string) result {
	t.Helper()
	prepare(t, name, filepath.Join(root, "etc/puppet"))
	md, _ := filepath.Abs(filepath.Join("testdata/cases", name, "metadata.json"))
	var stdout, stderr bytes.Buffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Environ: []string{"OS_CONFIG_FILES=" + md, RootVar + "=" + root}}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	err := Run(context.Background(), nil, env)
	code := 0
	if err != nil {
		code = 1
	}
	// Messages name the metadata file: its directory is made relative.
	td, _ := filepath.Abs("testdata")
	return result{code, stdout.String(), strings.ReplaceAll(stderr.String(), td, "testdata")}
}

// tree lists dir: "TYPE MODE PATH" lines, and the files' bytes.
func tree(t *testing.T, dir string) (string, map[string][]byte) {
	t.Helper()
	var lines []string
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		typ := "f"
		if d.IsDir() {
			typ = "d"
		} else {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[rel] = b
		}
		lines = append(lines, fmt.Sprintf("%s %04o %s", typ, fi.Mode().Perm(), rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", files
}

func compareTrees(t *testing.T, label string, gotDir, wantDir string) {
	t.Helper()
	gotList, gotFiles := tree(t, gotDir)
	wantList, wantFiles := tree(t, wantDir)
	if gotList != wantList {
		t.Errorf("%s: tree\n%s\nwant\n%s", label, gotList, wantList)
	}
	for name, want := range wantFiles {
		if got := gotFiles[name]; !bytes.Equal(got, want) {
			t.Errorf("%s: %s =\n%q\nwant\n%q", label, name, got, want)
		}
	}
}

// TestGolden: our files, byte for byte and mode for mode, are those the
// reference element wrote on the same metadata (recorded in expected/).
func TestGolden(t *testing.T) {
	for _, name := range caseNames(t) {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			r := runOurs(t, name, root)
			exp := filepath.Join("testdata/cases", name, "expected")
			got := filepath.Join(root, "etc/puppet")
			if strings.HasPrefix(name, "bad-") {
				want, err := os.ReadFile(filepath.Join(exp, "error"))
				if err != nil {
					t.Fatal(err)
				}
				if r.code != 1 || r.stderr != string(want) || r.stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
				}
				before := t.TempDir()
				prepare(t, name, before)
				compareTrees(t, name+" (unchanged)", got, before)
				return
			}
			// Warnings (an oac_data key the metadata lacks) are
			// expected/stderr; none without it.
			warnings, _ := os.ReadFile(filepath.Join(exp, "stderr"))
			if r.code != 0 || r.stderr != string(warnings) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and stderr %q", r.code, r.stdout, r.stderr, warnings)
			}
			wantList, err := os.ReadFile(filepath.Join(exp, "tree.txt"))
			if err != nil {
				t.Fatal(err)
			}
			gotList, gotFiles := tree(t, got)
			if gotList != string(wantList) {
				t.Errorf("tree\n%s\nwant\n%s", gotList, wantList)
			}
			for rel, b := range gotFiles {
				want, err := os.ReadFile(filepath.Join(exp, "puppet", rel))
				if err != nil || !bytes.Equal(b, want) {
					t.Errorf("%s =\n%q\nwant\n%q (%v)", rel, b, want, err)
				}
			}
		})
	}
}

// A data file replaced keeps its owner and group, as the reference's
// shell redirection kept them (it wrote into the file): ours sets them
// on the staged file before the rename, so the file never has another.
func TestReplacedFileKeepsItsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	root := t.TempDir()
	prepare(t, "existing-file-mode", filepath.Join(root, "etc/puppet"))
	common := filepath.Join(root, "etc/puppet/hieradata/common.yaml")
	if err := os.Chown(common, 4242, 4343); err != nil {
		t.Skip(err)
	}
	md, _ := filepath.Abs("testdata/cases/existing-file-mode/metadata.json")
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Environ: []string{"OS_CONFIG_FILES=" + md, RootVar + "=" + root}}
	if err := Run(context.Background(), nil, env); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][2]uint32{common: {4242, 4343}, filepath.Join(root, "etc/puppet/hieradata/fresh.yaml"): {0, 0}} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != want[0] || st.Gid != want[1] {
			t.Errorf("%s: owner %d:%d, want %d:%d", filepath.Base(path), st.Uid, st.Gid, want[0], want[1])
		}
	}
}

// An oac_data value is the key looked up, as it is: the reference put
// it unquoted on os-apply-config's command line, where white space split
// it (os-apply-config refused the extra word, and the value was written
// empty) and *?[ globbed it.
func TestOACKeyIsNotSplit(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "md.json")
	if err := os.WriteFile(md, []byte(`{"a b": "x", "*": "y", "hiera": {"datafiles": {"c": {"oac_data": {"k": "a b", "star": "*"}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	env := Env{Stdout: io.Discard, Stderr: &stderr, Environ: []string{"OS_CONFIG_FILES=" + md, RootVar + "=" + dir}}
	if err := Run(context.Background(), nil, env); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, DataDir, "c.yaml"))
	if string(got) != "\nk: x\nstar: y\n" || stderr.Len() != 0 {
		t.Errorf("c.yaml %q, stderr %q", got, stderr.String())
	}
}
