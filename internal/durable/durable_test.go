package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
