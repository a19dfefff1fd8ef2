package deployed

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Sweep removes the staged files of state files, markers, signal data
// and records (what killed writers left), whatever their age, and
// nothing else.
func TestSweep(t *testing.T) {
	d := Dir(t.TempDir())
	left := []string{".d0.json.123", ".d0.inflight.45", ".d0.notify.json.6", ".d0.signal.json.789"}
	kept := []string{"d0.json", "d0.inflight", ".d0.json.tmp", ".notes.txt.12", "notes.txt"}
	for _, name := range append(slices.Clone(left), kept...) {
		os.WriteFile(filepath.Join(string(d), name), []byte("{"), 0o600)
	}
	removed := d.Sweep()
	slices.Sort(removed)
	var want []string
	for _, name := range left {
		want = append(want, filepath.Join(string(d), name))
	}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(string(d), name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}

// A second Lock waits for the first one's Unlock, saying so once, and
// gives up when its context ends.
func TestLock(t *testing.T) {
	d := Dir(t.TempDir())
	first, err := d.Lock(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	waited := 0
	if _, err := d.Lock(ctx, func() { waited++ }); !errors.Is(err, context.DeadlineExceeded) || waited != 1 {
		t.Fatalf("second lock while held: %v, waiting called %d times", err, waited)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		first.Unlock()
	}()
	second, err := d.Lock(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	second.Unlock()
	if _, err := Dir(filepath.Join(string(d), "missing")).Lock(t.Context(), nil); err == nil {
		t.Error("locked a missing directory")
	}
}
