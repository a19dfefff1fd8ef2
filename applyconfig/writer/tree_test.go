package writer

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/tripleo-go/agent/internal/logging"
)

// hookRenames replaces renameDir and rename for a test: each tree's
// rename goes through before, which may fail it; per-file renames are
// counted. Both run in parallel: before is called under a lock.
func hookRenames(t *testing.T, before func(from, to string) error) (files *atomic.Int64) {
	realDir, realFile := renameDir, rename
	files = new(atomic.Int64)
	var mu sync.Mutex
	renameDir = func(from, to string) error {
		mu.Lock()
		err := before(from, to)
		mu.Unlock()
		if err != nil {
			return err
		}
		return realDir(from, to)
	}
	rename = func(from, to string) error { files.Add(1); return realFile(from, to) }
	t.Cleanup(func() { renameDir, rename = realDir, realFile })
	return files
}

// A directory that was not there is made whole under a staged name
// beside its target, with its files under their own names, and renamed
// into place in one step: no file of it is renamed on its own, and
// nothing of it is visible at its target before.
func TestNewTreesArePlacedWhole(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "etc"), 0o755)
	paths := []string{"etc/nova/nova.conf", "etc/nova/api/paste.ini", "etc/glance/g.conf", "top/x", "etc/loose.conf"}
	var files []File
	for _, p := range paths {
		files = append(files, file(filepath.Join(dir, p), p))
	}
	var placed []string
	fileRenames := hookRenames(t, func(from, to string) error {
		if !stagePattern().MatchString(filepath.Base(from)) || filepath.Dir(from) != filepath.Dir(to) {
			t.Errorf("tree staged as %s, not beside %s under a staged name", from, to)
		}
		if _, err := os.Lstat(to); !os.IsNotExist(err) {
			t.Errorf("%s visible before its tree is placed: %v", to, err)
		}
		for _, p := range paths {
			if rel, err := filepath.Rel(to, filepath.Join(dir, p)); err == nil && filepath.IsLocal(rel) {
				if got := mustRead(t, filepath.Join(from, rel)); got != p {
					t.Errorf("%s in the staged tree: %q", rel, got)
				}
			}
		}
		placed = append(placed, to)
		return nil
	})
	res, err := Apply(files, logging.Discard)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(placed)
	if want := []string{dir + "/etc/glance", dir + "/etc/nova", dir + "/top"}; !slices.Equal(placed, want) {
		t.Errorf("trees placed %v, want %v", placed, want)
	}
	if n := fileRenames.Load(); n != 1 {
		t.Errorf("%d files renamed on their own, want 1 (etc/loose.conf)", n)
	}
	if len(res.Written) != len(paths) {
		t.Errorf("written %v", res.Written)
	}
	for _, p := range paths {
		if got := mustRead(t, filepath.Join(dir, p)); got != p {
			t.Errorf("%s: %q", p, got)
		}
	}
}

// A tree that cannot be placed (an error, or a directory that appeared at
// its target meanwhile, which is not replaced) leaves its target as it
// was and nothing staged; the error names its first file in order, and
// the Result lists exactly the files put in place.
func TestFailedTreePlacementLeavesItsTargetAlone(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(to string) error
	}{
		{"an error", func(string) error { return syscall.EIO }},
		{"a directory made meanwhile", func(to string) error { return os.Mkdir(to, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			failing := filepath.Join(dir, "b")
			hookRenames(t, func(_, to string) error {
				if to == failing {
					return tc.fail(to)
				}
				return nil
			})
			files := []File{file(filepath.Join(dir, "a/1"), "1"), file(filepath.Join(dir, "b/c/2"), "2"),
				file(filepath.Join(dir, "b/3"), "3"), file(filepath.Join(dir, "d/4"), "4")}
			res, err := Apply(files, logging.Discard)
			if we, ok := err.(*Error); !ok || we.Path != files[1].Path {
				t.Fatalf("error %v, want one naming %s", err, files[1].Path)
			}
			for _, p := range res.Written {
				if filepath.Dir(p) != filepath.Join(dir, "a") && filepath.Dir(p) != filepath.Join(dir, "d") {
					t.Errorf("%s listed written", p)
				}
			}
			for _, f := range res.Written {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%s listed written: %v", f, err)
				}
			}
			if entries, err := os.ReadDir(failing); err == nil && len(entries) != 0 {
				t.Errorf("%s holds %v", failing, entries)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && stagePattern().MatchString(d.Name()) {
					t.Errorf("staged file or tree left: %s", p)
				}
				return nil
			})
		})
	}
}
