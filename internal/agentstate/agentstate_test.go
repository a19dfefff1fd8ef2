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
