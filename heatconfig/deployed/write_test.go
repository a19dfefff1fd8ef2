package deployed

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// The state directory that a node's first run makes survives a power cut
// with the state files synced in it: each directory made is synced into
// its parent (found by tools/torture's power cuts: the whole directory
// vanished and every deployment ran again). Moved from heatconfig, which
// ran 55-heat-config for it.
func TestStateDirectoryIsDurable(t *testing.T) {
	var synced []string
	defer func(orig func(string) error) { syncDir = orig }(syncDir)
	syncDir = func(dir string) error {
		synced = append(synced, dir)
		return nil
	}
	root := filepath.Join(t.TempDir(), "node")
	d := FromEnv(nil, root)
	if err := d.Prepare(LegacyFromEnv(nil, root), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if err := d.Claim("d1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, dir := range []string{"", "var", "var/lib", "var/lib/heat-config", "var/lib/heat-config/deployed"} {
		want[filepath.Join(root, dir)] = true
	}
	for _, dir := range synced {
		delete(want, dir)
	}
	if len(want) > 0 {
		t.Errorf("directories whose new entries were not synced: %v (synced: %v)", want, synced)
	}
}

// A claim leaves the state file (the document, private) and the marker;
// a second claim of the id fails with fs.ErrExist and leaves both; Finish
// removes the marker only; Touch makes an empty state file and keeps one
// that is there.
func TestClaimFinishTouch(t *testing.T) {
	d := Dir(t.TempDir())
	if err := d.Claim("a", []byte(`{"id": "a"}`)); err != nil {
		t.Fatal(err)
	}
	if !d.Deployed("a") || !d.Interrupted("a") {
		t.Fatal("claimed: want the state file and the marker")
	}
	if err := d.Claim("a", []byte(`{"id": "other"}`)); !errors.Is(err, fs.ErrExist) || !d.Interrupted("a") {
		t.Errorf("second claim: %v, marker %v", err, d.Interrupted("a"))
	}
	d.Finish("a")
	if b, _ := os.ReadFile(d.State("a")); string(b) != `{"id": "a"}` || d.Interrupted("a") {
		t.Errorf("after Finish: state %q, marker %v", b, d.Interrupted("a"))
	}
	if fi, err := os.Stat(d.State("a")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, %v", fi.Mode(), err)
	}
	for range 2 {
		if err := d.Touch("b"); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Touch("a"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(d.State("b")); len(b) != 0 || !d.Deployed("b") {
		t.Errorf("touched: %q", b)
	}
	if b, _ := os.ReadFile(d.State("a")); string(b) != `{"id": "a"}` {
		t.Errorf("Touch changed an existing state file: %q", b)
	}
}

// The names: the variable wins when set and not empty; Existing falls
// back on the legacy directory until the current one exists.
func TestPaths(t *testing.T) {
	root := t.TempDir()
	if got := FromEnv([]string{DirVar + "=/x"}, root); got != "/x" {
		t.Errorf("FromEnv with %s: %s", DirVar, got)
	}
	if got := FromEnv([]string{DirVar + "="}, root); got.String() != root+DefaultDir {
		t.Errorf("FromEnv empty: %s", got)
	}
	if got := LegacyFromEnv([]string{LegacyVar + "=/y"}, root); got != "/y" {
		t.Errorf("LegacyFromEnv: %s", got)
	}
	if got := Existing(nil, root); got.String() != root+LegacyDir {
		t.Errorf("Existing, none there: %s", got)
	}
	os.MkdirAll(root+DefaultDir, 0o700)
	if got := Existing(nil, root); got.String() != root+DefaultDir {
		t.Errorf("Existing, current there: %s", got)
	}
	d := Dir("/s")
	for got, want := range map[string]string{d.State("i"): "/s/i.json", d.Inflight("i"): "/s/i.inflight", d.Notify("i"): "/s/i.notify.json", d.Signal("i"): "/s/i.signal.json"} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}
