package pkgtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStateOf(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "f"), filepath.Join(dir, "l")
	if err := os.WriteFile(file, []byte("x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path    string
		ok      bool
		content string
	}{
		{file, true, "x\n"},
		{link, true, "f"},
		{filepath.Join(dir, "none"), false, ""},
	} {
		got, ok := StateOf(t, c.path)
		if ok != c.ok || got.Content != c.content {
			t.Errorf("StateOf(%s) = %q, %v; want %q, %v", c.path, got.Content, ok, c.content, c.ok)
		}
	}
	if got, _ := StateOf(t, file); got.Mode.Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", got.Mode)
	}
}
