package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// files keeps the regular files of a tree: a steady pass may leave a
// directory a fresh one would not make.
func files(t *testing.T, dir string) map[string]entry {
	t.Helper()
	tree, err := snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, e := range tree {
		if !e.mode.IsRegular() {
			delete(tree, p)
		}
	}
	return tree
}

// The steady bound brings a previous render up to date, changing only
// what differs, and leaves the files a fresh render would make, with
// either durability.
func TestSteadyBound(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	templates, meta := tinyCorpus(t)
	flagOn := filepath.Join(filepath.Dir(meta[2]), "21.json")
	if err := os.WriteFile(flagOn, []byte(`{"a": {"password": "n3w", "flag": true, "html": "<&>"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := append(meta[:2:2], flagOn)
	oacPath := filepath.Join(templates, "etc/a/secrets.conf.oac")
	tests := []struct {
		name        string
		before, now []string
		oac         string // the control file of secrets.conf for the steady pass
		want        int
	}{
		{"nothing changed", meta, meta, "", 0},
		{"a body changed and a file appears in a new dir", meta, changed, "", 2},
		{"a body changed and a file renders empty", changed, meta, "", 2},
		{"a mode changed", meta, meta, "mode: 0640\n", 1},
	}
	for _, how := range []syncMethod{syncOnce, fdatasyncEach} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				orig, err := os.ReadFile(oacPath)
				if err != nil {
					t.Fatal(err)
				}
				out := t.TempDir()
				if _, err := freshBound(templates, tc.before)(out); err != nil {
					t.Fatal(err)
				}
				if tc.oac != "" {
					defer os.WriteFile(oacPath, orig, 0o644)
					if err := os.WriteFile(oacPath, []byte(tc.oac), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				d, n, err := steadyBound(templates, tc.now, how)(out)
				if err != nil || d <= 0 || n != tc.want {
					t.Errorf("%v, %d changed, %v; want %d changed", d, n, err, tc.want)
				}
				fresh := t.TempDir()
				if _, err := freshBound(templates, tc.now)(fresh); err != nil {
					t.Fatal(err)
				}
				if diffs := diffTrees(files(t, fresh), files(t, out), "fresh", "steady"); len(diffs) > 0 {
					t.Errorf("steady pass differs from a fresh render: %q", diffs)
				}
			})
		}
	}
}

func TestSteadyBoundErrors(t *testing.T) {
	templates, meta := tinyCorpus(t)
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "etc/a/a.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err := steadyBound(templates, meta, syncOnce)(out)
	if err == nil || !strings.Contains(err.Error(), "etc/a/a.conf: not a regular file") {
		t.Errorf("error %v, want one naming etc/a/a.conf", err)
	}
}

// sameChanges wants the paths ours changed and a write for each file
// among them.
func TestSameChanges(t *testing.T) {
	before := map[string]entry{
		"etc":     {mode: 0o755 | os.ModeDir},
		"etc/a":   {mode: 0o644, data: []byte("a")},
		"etc/b":   {mode: 0o644, data: []byte("b")},
		"etc/old": {mode: 0o644, data: []byte("old")},
	}
	after := map[string]entry{
		"etc":       {mode: 0o755 | os.ModeDir},
		"etc/a":     {mode: 0o644, data: []byte("A")},
		"etc/b":     {mode: 0o600, data: []byte("b")},
		"etc/new":   {mode: 0o755 | os.ModeDir},
		"etc/new/c": {mode: 0o644, data: []byte("c")},
	}
	all := []string{"etc/a", "etc/b", "etc/new", "etc/new/c", "etc/old"}
	tests := []struct {
		name  string
		ours  []string
		wrote int
		want  string
	}{
		{"the same", all, 4, ""},
		{"ours changed fewer", all[:4], 4, "ours"},
		{"a write too many", all, 5, "wrote 5 files, of which 4 changed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sameChanges(before, after, tc.ours, tc.wrote)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
