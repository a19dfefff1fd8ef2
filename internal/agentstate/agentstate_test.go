package agentstate

import (
	"os"
	"path/filepath"
	"strings"
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

// Deployments come in start order with their signal; what became of
// each depends on its signal and, without one, on when it started
// against the last pass; a daemon's Reader sees a state file changed.
func TestDeployments(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	last := &Pass{Started: t0, Ended: t0.Add(time.Minute)}
	put := func(id, doc string, at time.Time, sig *Signal) {
		p := filepath.Join(dir, id+".json")
		os.WriteFile(p, []byte(doc), 0o600)
		os.Chtimes(p, at, at)
		if sig != nil {
			Write(filepath.Join(dir, id+".signal.json"), sig)
		}
	}
	put("ok", `{"name": "a", "group": "script"}`, t0.Add(-2*time.Hour), &Signal{StatusCode: "0", Result: "sent"})
	put("bad", `{"name": "b", "group": "puppet"}`, t0.Add(-time.Hour), &Signal{StatusCode: "2", Result: "sent"})
	put("lost", `{"name": "c"}`, t0.Add(time.Second), nil)
	put("now", `{"name": "d"}`, t0.Add(time.Hour), nil)
	put("old", ``, t0.Add(-3*time.Hour), nil)
	os.WriteFile(filepath.Join(dir, "x.notify.json"), []byte(`{}`), 0o600)
	var r Reader
	ds, err := r.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.ID+":"+d.Name+":"+d.Outcome(last))
	}
	want := "old::unknown ok:a:succeeded bad:b:failed lost:c:unsignalled now:d:running"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	put("bad", `{"name": "b2", "group": "puppet"}`, t0.Add(-time.Hour+time.Second), nil)
	if ds, _ = r.Read(dir); ds[2].Name != "b2" {
		t.Errorf("a changed state file was not read again: %+v", ds[2])
	}
}
