package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A file is replaced whole, private, and nothing staged is left beside it.
func TestWriteFileReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d1.notify.json")
	for _, body := range []string{"a longer first text", "short"} {
		if err := WriteFile(path, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != body {
			t.Fatalf("read %q, %v; want %q", got, err, body)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if fi, err := os.Stat(path); len(entries) != 1 || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%d files, mode %v (%v): want the file alone, 0600", len(entries), fi.Mode(), err)
	}
}

// A file is created whole and private, once: a second create fails as
// fs.ErrExist and keeps the first bytes; nothing staged is left.
func TestCreateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d1.json")
	if err := CreateFile(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := CreateFile(path, []byte("second")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	got, err := os.ReadFile(path)
	entries, _ := os.ReadDir(filepath.Dir(path))
	fi, _ := os.Stat(path)
	if err != nil || string(got) != "first" || len(entries) != 1 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("read %q (%v), %d files, mode %v: want \"first\" alone, 0600", got, err, len(entries), fi.Mode())
	}
}

// The names WriteFile stages, and no others, are told with their file.
func TestStagedFor(t *testing.T) {
	for name, want := range map[string]string{
		".d1.notify.json.123": "d1.notify.json", ".status.json.4": "status.json", ".a.1": "a",
		"d1.json": "", ".d1.json.tmp": "", ".d1.json.": "", "..1": "", ".json": "", ".os-collect-config-12.tmp": "",
	} {
		target, ok := StagedFor(name)
		if target != want || ok != (want != "") {
			t.Errorf("StagedFor(%q) = %q, %v; want %q", name, target, ok, want)
		}
	}
	// What WriteFile stages is what StagedFor tells.
	dir := t.TempDir()
	tmp, err := os.CreateTemp(dir, ".x.json.")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	if target, ok := StagedFor(filepath.Base(tmp.Name())); !ok || target != "x.json" {
		t.Errorf("os.CreateTemp's name %s: %q, %v", tmp.Name(), target, ok)
	}
}

// A file replaced with an owner and a mode has them from the start: the
// staged file has them before the rename (and before its sync, which
// makes them durable with the bytes), so no reader ever sees the new
// bytes with the writer's owner or the staged file's 0600, and the old
// file keeps its own until the rename.
func TestWriteFileOwnedBeforeTheRename(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	path := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const uid, gid = 4242, 4343
	var staged, target fs.FileInfo
	beforeRename = func(tmp string) {
		staged, _ = os.Stat(tmp)
		target, _ = os.Stat(path)
	}
	defer func() { beforeRename = nil }()
	if err := WriteFileOwned(path, []byte("new\n"), 0o640|fs.ModeSetgid, uid, gid); err != nil {
		t.Fatal(err)
	}
	if staged == nil || target == nil {
		t.Fatal("the hook did not see the staged file and the target")
	}
	if u, g := owner(staged); u != uid || g != gid || staged.Mode() != 0o640|fs.ModeSetgid {
		t.Errorf("staged before the rename: %d:%d %v, want %d:%d %v", u, g, staged.Mode(), uid, gid, 0o640|fs.ModeSetgid)
	}
	if u, g := owner(target); u != 0 || g != 0 || target.Mode() != 0o600 {
		t.Errorf("the old file before the rename: %d:%d %v, want it untouched (0:0 0600)", u, g, target.Mode())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if u, g := owner(fi); u != uid || g != gid || fi.Mode() != 0o640|fs.ModeSetgid {
		t.Errorf("after: %d:%d %v", u, g, fi.Mode())
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("bytes %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// -1 leaves the owner the writer's, as os.Chown; WriteFileMode is that.
func TestWriteFileOwnedKeepsTheWritersOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.prom")
	if err := WriteFileOwned(path, []byte("x\n"), 0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if u, g := owner(fi); u != os.Geteuid() || g != os.Getegid() || fi.Mode().Perm() != 0o644 {
		t.Errorf("%d:%d %v", u, g, fi.Mode())
	}
}

func owner(fi fs.FileInfo) (uid, gid int) {
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}
