package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffTrees(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write := func(root, rel, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // umask-proof
			t.Fatal(err)
		}
	}
	write(a, "etc/same", "x", 0o644)
	write(b, "etc/same", "x", 0o644)
	write(a, "etc/body", "abc", 0o644)
	write(b, "etc/body", "abd", 0o644)
	write(a, "etc/mode", "m", 0o600)
	write(b, "etc/mode", "m", 0o640)
	write(a, "etc/only", "o", 0o644)

	ta, err := snapshot(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := snapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTrees(ta, ta, "ref", "ours"); len(d) != 0 {
		t.Errorf("tree differs from itself: %q", d)
	}
	got := strings.Join(diffTrees(ta, tb, "ref", "ours"), "\n")
	for _, want := range []string{"etc/body: contents differ at byte 2", "etc/mode: mode", "etc/only: only in ref"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "etc/same") {
		t.Errorf("identical file reported:\n%s", got)
	}
	if n := countFiles(ta); n != 4 {
		t.Errorf("countFiles = %d, want 4", n)
	}
}
