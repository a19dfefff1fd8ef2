package agentstate

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A record is replaced whole, private, and reads back as written.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), PassFile)
	for _, exit := range []int{1, 0} {
		want := Pass{Version: SchemaVersion, Started: time.Unix(1764064800, 0).UTC(), Converged: exit == 0,
			Command: &Command{Command: "os-refresh-config", Exit: exit}}
		if err := Write(path, want); err != nil {
			t.Fatal(err)
		}
		var got Pass
		if err := Read(path, &got); err != nil || got.Converged != want.Converged || got.Command.Exit != exit || !got.Started.Equal(want.Started) {
			t.Fatalf("read %+v, %v", got, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if fi, err := os.Stat(path); len(entries) != 1 || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%d files, mode %v (%v): want the record alone, 0600", len(entries), fi.Mode(), err)
	}
}

// What a killed Write staged is removed once it is old; a file being
// written now (another writer's), and other names, are not.
func TestRemoveStaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PassFile)
	old := time.Now().Add(-time.Hour)
	put := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(`{"vers`), 0o600)
		os.Chtimes(p, mtime, mtime)
	}
	put(".status.json.123", old)
	put(".status.json.456", time.Now())
	put(".status.json.bak", old)
	put(".other.json.123", old)
	if n := RemoveStaged(path); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	for name, want := range map[string]bool{".status.json.123": false, ".status.json.456": true, ".status.json.bak": true, ".other.json.123": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}

// A stop is added to the record, the last pass's fields kept; an
// unreadable record, or none, becomes one with no pass in it.
func TestWriteStop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	stop := Stop{At: time.Unix(1764064805, 0).UTC(), Cause: "configuration", Error: "Unknown collectors ['local,heat']", Exit: 1}
	if err := WriteStop(dir, stop); err != nil {
		t.Fatal(err)
	}
	var got Pass
	if err := Read(filepath.Join(dir, PassFile), &got); err != nil || got.HasPass() || got.Stopped == nil || *got.Stopped != stop {
		t.Fatalf("no pass before: %+v, %v", got, err)
	}
	last := Pass{Version: SchemaVersion, Started: time.Unix(1764064800, 0).UTC(), Ended: time.Unix(1764064802, 0).UTC(), Converged: true,
		Collectors: []Collector{{Name: "local", Result: "ok"}}}
	Write(filepath.Join(dir, PassFile), last)
	if err := WriteStop(dir, stop); err != nil {
		t.Fatal(err)
	}
	got = Pass{}
	if err := Read(filepath.Join(dir, PassFile), &got); err != nil || !got.HasPass() || !got.Ended.Equal(last.Ended) || !got.Converged ||
		len(got.Collectors) != 1 || got.Stopped == nil || got.Stopped.Error != stop.Error {
		t.Fatalf("after a pass: %+v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, PassFile), []byte(`{"vers`), 0o600)
	if err := WriteStop(dir, stop); err != nil {
		t.Fatal(err)
	}
	got = Pass{}
	if err := Read(filepath.Join(dir, PassFile), &got); err != nil || got.HasPass() || got.Stopped == nil {
		t.Fatalf("over a torn record: %+v, %v", got, err)
	}
}
