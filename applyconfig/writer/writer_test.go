package writer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/logging"
)

func file(path, body string) File {
	return File{Path: path, Body: []byte(body), UID: -1, GID: -1, AllowEmpty: true}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

func TestNewFilesAre0644InNewDirs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "etc/nova/nova.conf")
	res, err := Apply([]File{file(p, "x=1\n")}, logging.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Written) != 1 || mustRead(t, p) != "x=1\n" {
		t.Fatalf("res %+v", res)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
}

// Improvement over the reference: an identical file is not rewritten, so
// its inode and mtime stay and nothing watching it wakes up.
func TestUnchangedFileIsNotRewritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.conf")
	if _, err := Apply([]File{file(p, "same\n")}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	ino := inode(t, p)
	res, err := Apply([]File{file(p, "same\n")}, logging.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if len(res.Unchanged) != 1 || inode(t, p) != ino || !st.ModTime().Equal(old) {
		t.Fatalf("file was rewritten: %+v", res)
	}
	// A different mode is a change.
	f := file(p, "same\n")
	f.Mode = 0o600
	if res, _ := Apply([]File{f}, logging.Discard); len(res.Written) != 1 {
		t.Fatalf("mode change not written: %+v", res)
	}
}

func TestModeKeptFromExistingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret.conf")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply([]File{file(p, "new")}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 || mustRead(t, p) != "new" {
		t.Fatalf("mode %v", st.Mode())
	}
}

func TestSymlinkReplacedTargetUntouched(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	os.WriteFile(target, []byte("target"), 0o640)
	os.Symlink("target", link)
	if _, err := Apply([]File{file(link, "new")}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Lstat(link)
	if !st.Mode().IsRegular() || st.Mode().Perm() != 0o640 || mustRead(t, target) != "target" {
		t.Fatalf("link %v, target %q", st.Mode(), mustRead(t, target))
	}
}

func TestEmptyNotAllowed(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "present")
	absent := filepath.Join(dir, "absent")
	os.WriteFile(present, []byte("x"), 0o644)
	f1, f2 := file(present, ""), file(absent, "")
	f1.AllowEmpty, f2.AllowEmpty = false, false
	res, err := Apply([]File{f1, f2}, logging.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(present); !os.IsNotExist(err) || len(res.Deleted) != 1 {
		t.Fatalf("present not deleted: %+v", res)
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Fatal("absent created")
	}
}

// When one file cannot be staged, no file is replaced and no temporary
// file is left behind.
func TestFailedStageChangesNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.conf")
	os.WriteFile(good, []byte("old"), 0o644)
	blocker := filepath.Join(dir, "blocker")
	os.WriteFile(blocker, []byte("a file where a directory is needed"), 0o644)
	_, err := Apply([]File{file(good, "new"), file(filepath.Join(blocker, "x.conf"), "x")}, logging.Discard)
	if err == nil {
		t.Fatal("no error")
	}
	if mustRead(t, good) != "old" {
		t.Fatal("good.conf was replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("left behind: %v", entries)
	}
	if we, ok := err.(*Error); !ok || we.Path != filepath.Join(blocker, "x.conf") {
		t.Fatalf("error does not name the file: %v", err)
	}
}

// Files are staged in parallel, but a failure leaves the directories a
// run in order would have: those of the files before the failing one.
func TestFailedStageLeavesNoLaterDirectories(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	os.WriteFile(blocker, []byte("a file where a directory is needed"), 0o644)
	before, after := filepath.Join(dir, "before", "a"), filepath.Join(dir, "after", "b")
	_, err := Apply([]File{file(filepath.Join(before, "1.conf"), "1"), file(filepath.Join(blocker, "x.conf"), "x"),
		file(filepath.Join(after, "2.conf"), "2")}, logging.Discard)
	if we, ok := err.(*Error); !ok || we.Path != filepath.Join(blocker, "x.conf") {
		t.Fatalf("error does not name the first failing file: %v", err)
	}
	if entries, err := os.ReadDir(before); err != nil || len(entries) != 0 {
		t.Fatalf("%s: want it empty: %v %v", before, entries, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); !os.IsNotExist(err) {
		t.Fatalf("directory of a later file made: %v", err)
	}
}

func TestTargetIsDirectory(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if _, err := Apply([]File{file(filepath.Join(dir, "d"), "x")}, logging.Discard); err == nil {
		t.Fatal("no error")
	}
}

func BenchmarkApplyUnchanged(b *testing.B) {
	dir := b.TempDir()
	var files []File
	for i := 0; i < 100; i++ {
		files = append(files, file(filepath.Join(dir, "etc", "svc", string(rune('a'+i%26))+string(rune('a'+i/26))), "key = value\n"))
	}
	if _, err := Apply(files, logging.Discard); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Apply(files, logging.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// syncs records the durability calls instead of making them.
type syncs struct{ fs, dirs []string }

func recordSyncs(t *testing.T) *syncs {
	s := &syncs{}
	oldFS, oldDir := syncFS, syncDir
	syncFS = func(f *os.File) error { s.fs = append(s.fs, f.Name()); return nil }
	syncDir = func(f *os.File) error { s.dirs = append(s.dirs, f.Name()); return nil }
	t.Cleanup(func() { syncFS, syncDir = oldFS, oldDir })
	return s
}

// Durability is batched: one syncfs for all staged files of a filesystem
// before the renames, then one fsync per directory whose entries changed.
// A new tree's own entries are made durable with its files, before it is
// renamed: only the directory that gains it changes.
func TestDurabilityIsBatched(t *testing.T) {
	s := recordSyncs(t)

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc/a"), 0o755); err != nil {
		t.Fatal(err)
	}
	var files []File
	for _, p := range []string{"etc/a/1", "etc/a/2", "etc/b/1", "etc/c/d/1", "top"} {
		files = append(files, file(filepath.Join(dir, p), "x"))
	}
	if _, err := Apply(files, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if len(s.fs) != 1 {
		t.Errorf("syncfs calls: %v, want 1", s.fs)
	}
	want := map[string]bool{dir: true, dir + "/etc": true, dir + "/etc/a": true}
	if len(s.dirs) != len(want) {
		t.Errorf("directory syncs %v, want each of %v once", s.dirs, want)
	}
	for _, d := range s.dirs {
		if !want[d] {
			t.Errorf("unexpected directory sync %s", d)
		}
	}
	// Nothing changed: nothing to make durable.
	s.fs, s.dirs = nil, nil
	if _, err := Apply(files, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if len(s.fs)+len(s.dirs) != 0 {
		t.Errorf("syncs on an unchanged run: %v %v", s.fs, s.dirs)
	}
}

// Past maxDirFsyncs changed directories on a filesystem, one syncfs after
// the renames replaces the directory fsyncs (a render may write into
// hundreds of directories, each fsync a journal commit).
func TestManyDirectoriesSyncTheFilesystemOnce(t *testing.T) {
	s := recordSyncs(t)

	dir := t.TempDir()
	var files []File
	for i := range maxDirFsyncs + 1 {
		files = append(files, file(filepath.Join(dir, "etc", fmt.Sprint(i), "f"), "x"))
		if err := os.MkdirAll(filepath.Dir(files[i].Path), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Apply(files, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if len(s.fs) != 2 || len(s.dirs) != 0 {
		t.Errorf("syncfs %v and directory fsyncs %v; want 2 syncfs (staged data, then entries) and no fsync", s.fs, s.dirs)
	}
	// Deleting in as many directories: the same, though those directories
	// were not created by this run.
	s.fs, s.dirs = nil, nil
	for i := range files {
		files[i].Body, files[i].AllowEmpty = nil, false
	}
	res, err := Apply(files, logging.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != len(files) || len(s.fs) != 1 || len(s.dirs) != 0 {
		t.Errorf("deleted %d, syncfs %v, fsyncs %v; want %d, 1, none", len(res.Deleted), s.fs, s.dirs, len(files))
	}
}

func TestControlModeAndOwnerOnNewAndExistingFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.conf")
	f := file(p, "x")
	f.Mode = 0o640
	if _, err := Apply([]File{f}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Fatalf("new file mode %v", st.Mode())
	}
	f.Body, f.Mode = []byte("y"), 0o600
	if _, err := Apply([]File{f}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("existing file mode %v", st.Mode())
	}
}

// A file that fails while the staged files are written in parallel leaves
// what a loop in order would have: no staged file or tree anywhere, its
// own directories and those before it (empty), none of a later file's, no
// target replaced; and the error names it, not a later failure. Each
// failure here is in a new tree (a name too long, ENAMETOOLONG even for
// root) and in a directory that was there (room for the target's name
// but not for a staging file's).
func TestFailedParallelWriteRemovesLaterDirectories(t *testing.T) {
	tooLong := strings.Repeat("n", 256)
	for _, tc := range []struct {
		name string
		// failing returns the failing file, and the directory of the
		// failing file that this run made and must leave, if any.
		failing func(t *testing.T, dir string) (file, made string)
	}{
		{"in a new tree", func(t *testing.T, dir string) (string, string) {
			return filepath.Join(dir, "mine", "a", tooLong), filepath.Join(dir, "mine", "a")
		}},
		{"in a directory that was there", func(t *testing.T, dir string) (string, string) {
			const want = unix.PathMax - 20
			long := dir
			for len(long) < want {
				long = filepath.Join(long, strings.Repeat("d", min(200, want-len(long)-1)))
			}
			if err := os.MkdirAll(long, 0o755); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(long, "f"), ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			failing, made := tc.failing(t, dir)
			good := filepath.Join(dir, "good.conf")
			os.WriteFile(good, []byte("old"), 0o644)
			before := filepath.Join(dir, "before", "b", "1.conf")
			later := filepath.Join(dir, "later", "a", "2.conf")
			alsoBad := filepath.Join(dir, "worse", tooLong) // fails too, later
			_, err := Apply([]File{file(good, "new"), file(before, "1"), file(failing, "x"), file(later, "2"), file(alsoBad, "y")}, logging.Discard)
			if we, ok := err.(*Error); !ok || we.Path != failing {
				t.Fatalf("error does not name the first failing file: %v", err)
			}
			if mustRead(t, good) != "old" {
				t.Error("good.conf was replaced")
			}
			for _, d := range []string{filepath.Dir(before), made} {
				if entries, err := os.ReadDir(d); d != "" && (err != nil || len(entries) != 0) {
					t.Errorf("%s: want it made and empty: %v %v", d, entries, err)
				}
			}
			for _, d := range []string{filepath.Join(dir, "later"), filepath.Join(dir, "worse")} {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s: a later file's directory was left: %v", d, err)
				}
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

// A file gets exactly its mode whatever the umask: created with it when
// the umask leaves all of it, else through a chmod; set-id bits always
// through a chmod.
func TestModeIsExactUnderAnyUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		mode  uint32
	}{{0o022, 0o644}, {0o022, 0o640}, {0o077, 0o644}, {0o022, 0o666}, {0o000, 0o4755}, {0o022, 0o2644}, {0o027, 0o400}} {
		old := unix.Umask(tc.umask)
		dir := t.TempDir()
		f := file(filepath.Join(dir, "new.conf"), "x")
		f.Mode = tc.mode
		_, err := Apply([]File{f}, logging.Discard)
		unix.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(f.Path, &st); err != nil {
			t.Fatal(err)
		}
		if got := st.Mode & 0o7777; got != tc.mode {
			t.Errorf("umask %04o, mode %04o: file has %04o", tc.umask, tc.mode, got)
		}
	}
}

// readExactly brings n bytes and one more when the file has them: enough
// to tell a file of n bytes from a longer one, in one read. It reads into
// the buffer it is given, grown when too small, whatever it held before.
func TestReadExactly(t *testing.T) {
	dir := t.TempDir()
	var buf []byte
	for _, size := range []int{40, 0, 4, 5, 6, 40} {
		p := filepath.Join(dir, "f")
		body := bytes.Repeat([]byte("x"), size)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readExactly(p, 5, &buf)
		if want := body[:min(size, 6)]; err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %q, %v; want %q", size, got, err, want)
		}
	}
}

// The renames run in parallel. When one fails, the error names the first
// in order that failed, the Result lists exactly the files replaced, the
// others keep their old bytes, no staged file is left, and the log names
// each file replaced, in order.
func TestFailedRenameReportsWhatWasReplaced(t *testing.T) {
	dir := t.TempDir()
	var files []File
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%7), fmt.Sprintf("%02d.conf", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("old"), 0o644)
		files = append(files, file(p, "new"))
	}
	failing := map[string]bool{files[17].Path: true, files[23].Path: true}
	real := rename
	rename = func(from, to string) error {
		if failing[to] {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EIO}
		}
		return real(from, to)
	}
	defer func() { rename = real }()
	var logged bytes.Buffer
	res, err := Apply(files, logging.New(&logged, logging.Options{Identifier: "t"}))
	if we, ok := err.(*Error); !ok || we.Path != files[17].Path {
		t.Fatalf("error does not name the first failing file: %v", err)
	}
	written := map[string]bool{}
	for _, p := range res.Written {
		written[p] = true
	}
	for i, f := range files {
		want := "old"
		if written[f.Path] {
			want = "new"
		}
		if got := mustRead(t, f.Path); got != want {
			t.Errorf("%s: %q, want %q (listed written: %v)", f.Path, got, want, written[f.Path])
		}
		if i < 17 && !written[f.Path] {
			t.Errorf("%s: before the failing file, not replaced", f.Path)
		}
		if failing[f.Path] && written[f.Path] {
			t.Errorf("%s: failed, yet listed written", f.Path)
		}
	}
	for i := range 7 {
		entries, _ := os.ReadDir(filepath.Join(dir, fmt.Sprintf("d%d", i)))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), stagePrefix) {
				t.Errorf("staged file left: %s", e.Name())
			}
		}
	}
	var order []string
	for line := range strings.SplitSeq(logged.String(), "\n") {
		if _, p, ok := strings.Cut(line, "writing "); ok {
			order = append(order, p)
		}
	}
	var want []string
	for _, f := range files {
		if written[f.Path] || f.Path == files[17].Path {
			want = append(want, f.Path)
		}
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged writes:\n%s\nwant, in order:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
}
