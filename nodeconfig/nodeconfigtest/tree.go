package nodeconfigtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// frozen is the time Freeze gives every path: far enough in the past
// that anything a step touches gets another, whatever the clock's
// granularity.
var frozen = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// Freeze sets the access and modification times of every path under dir
// (dir included, links not followed) to one time in the past, so that
// Tree tells a file or directory a step wrote, even with the same bytes.
func Freeze(t testing.TB, dir string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			paths = append(paths, p)
		}
		return nil
	})
	// Children first: setting a child's times does not change its
	// directory's, but be plain about the order anyway.
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Chtimes(paths[i], frozen, frozen); err != nil {
			t.Fatal(err)
		}
	}
}

// Tree describes every path under dir, one sorted line each: its type
// and mode, inode, modification time and, for a regular file, its bytes
// (quoted) or a link's target. After Freeze, two Trees are equal only
// when nothing under dir was created, removed, written, replaced (a
// rename brings another inode) or staged and removed (its directory's
// time changes).
func Tree(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %s %d %s", rel, st.Mode(), st.Sys().(*syscall.Stat_t).Ino, st.ModTime().UTC().Format(time.RFC3339Nano))
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case st.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %q", data)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
