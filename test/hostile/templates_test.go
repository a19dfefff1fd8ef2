package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// refOAC is the reference os-apply-config, the oracle of what a template
// or output tree with links should give.
const refOAC = "/usr/bin/os-apply-config"

// treeCase is a work dir laid out by setup: t/ (templates), out/ (the
// output root), outside/ (what links point to), md.json.
type treeCase struct {
	name  string
	setup func(t *testing.T, w string)
	// code is our exit status; errs the error lines ours must log, each
	// naming a file (W stands for the work dir).
	code int
	errs []string
	// noReference: the reference hangs or crashes (a traceback, a
	// temporary file left) here; only ours runs.
	noReference bool
}

var treeCases = []treeCase{
	{name: "template linked to a file outside the tree", setup: linkedOutside("t/etc/linked", "tmpl", "linked={{x}}\n", 0o644)},
	{name: "template directory linked outside is not entered", setup: func(t *testing.T, w string) {
		write(t, w+"/outside/dir/f", "{{x}}\n", 0o644)
		symlink(t, "../../outside/dir", w+"/t/etc/linkdir")
	}},
	{name: "dangling template link", setup: func(t *testing.T, w string) {
		symlink(t, "/nonexistent/template", w+"/t/etc/dangling")
	}, code: 1, errs: []string{
		"[ERROR] [Errno 2] No such file or directory: 'W/t/etc/dangling'",
		"[ERROR] ('could not render moustache template W/t/etc/dangling', 'W/t/etc/dangling')"}},
	{name: "template link loop", setup: func(t *testing.T, w string) {
		symlink(t, "loop", w+"/t/etc/loop")
	}, code: 1, errs: []string{
		"[ERROR] [Errno 40] Too many levels of symbolic links: 'W/t/etc/loop'",
		"[ERROR] ('could not render moustache template W/t/etc/loop', 'W/t/etc/loop')"}},
	{name: "template that is a FIFO", setup: func(t *testing.T, w string) {
		if err := syscall.Mkfifo(w+"/t/etc/fifo", 0o644); err != nil {
			t.Fatal(err)
		}
	}, code: 1, noReference: true, errs: []string{
		"[ERROR] W/t/etc/fifo is not a regular file",
		"[ERROR] ('could not render moustache template W/t/etc/fifo', 'W/t/etc/fifo')"}},
	{name: "template name with a newline", setup: func(t *testing.T, w string) {
		write(t, w+"/t/etc/new\nline", "{{x}}\n", 0o644)
	}},
	{name: "executable template linked outside", setup: linkedOutside("t/etc/exe", "exe", "#!/bin/sh\necho executed\n", 0o755)},
	{name: "output file linked outside is replaced, its target kept", setup: linkedOutside("out/etc/foo", "target", "precious\n", 0o640)},
	{name: "output file dangling link is replaced", setup: func(t *testing.T, w string) {
		symlink(t, "../../outside/none", w+"/out/etc/foo")
	}},
	{name: "output directory linked outside is followed", setup: func(t *testing.T, w string) {
		if err := os.MkdirAll(w+"/outside/etcdir", 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(w + "/out/etc")
		symlink(t, "../outside/etcdir", w+"/out/etc")
	}},
	{name: "output path is a directory", setup: func(t *testing.T, w string) {
		if err := os.MkdirAll(w+"/out/etc/foo/sub", 0o755); err != nil {
			t.Fatal(err)
		}
	}, code: 1, noReference: true, errs: []string{"[ERROR] could not write W/out/etc/foo: is a directory"}},
	{name: "owner that does not exist", setup: func(t *testing.T, w string) {
		write(t, w+"/t/etc/foo.oac", "owner: no-such-user-e2e\n", 0o644)
	}, code: 1, errs: []string{`[ERROR] ("owner 'no-such-user-e2e' not found in passwd database", 'W/t/etc/foo')`}},
	{name: "group that does not exist", setup: func(t *testing.T, w string) {
		write(t, w+"/t/etc/foo.oac", "group: no-such-group-e2e\n", 0o644)
	}, code: 1, errs: []string{`[ERROR] ("group 'no-such-group-e2e' not found in group database", 'W/t/etc/foo')`}},
}

// Template and output trees with links, FIFOs, odd names and .oac
// owners that do not exist: ours does what the reference does (the same
// exit status and the same tree afterwards: nothing written outside out/,
// a link at a target replaced, never written through), except where the
// reference hangs; an error is one line naming the file (two for a
// template that cannot be read, as in the reference), exit 1, nothing
// written.
func TestTemplateAndOutputTrees(t *testing.T) {
	_, refErr := os.Stat(refOAC)
	if refErr != nil && os.Getenv("REQUIRE_REFERENCE") == "1" {
		t.Fatalf("reference %s: %v", refOAC, refErr)
	}
	for _, tc := range treeCases {
		t.Run(tc.name, func(t *testing.T) {
			ours, before := oacCase(t, tc, filepath.Join(agent.Dir(t), "os-apply-config"))
			if ours.Code != tc.code {
				t.Errorf("exit %d, want %d\n%s", ours.Code, tc.code, ours.Stderr)
			}
			var errs []string
			for _, l := range strings.Split(ours.Stderr, "\n") {
				if _, rest, ok := strings.Cut(l, "] [ERROR]"); ok {
					errs = append(errs, "[ERROR]"+rest)
				}
			}
			if strings.Join(errs, "\n") != strings.Join(tc.errs, "\n") {
				t.Errorf("error lines:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(tc.errs, "\n"))
			}
			if d := difftest.SetDiff(before, ours.Tree); ours.Code != 0 && d != "" {
				t.Errorf("a failed run changed the work dir:\n%s", d)
			}
			if tc.noReference || refErr != nil {
				return
			}
			ref, _ := oacCase(t, tc, refOAC)
			if strings.Contains(ref.Stderr, "Traceback") {
				t.Fatalf("the reference crashed:\n%s", ref.Stderr)
			}
			difftest.Compare(t, ref, ours)
		})
	}
}

// oacCase lays out tc's work dir and runs prog on it; before is the
// work dir before the run.
func oacCase(t *testing.T, tc treeCase, prog string) (_ difftest.Outcome, before []string) {
	t.Helper()
	w := t.TempDir()
	write(t, w+"/md.json", `{"x": "value"}`, 0o644)
	write(t, w+"/t/etc/foo", "foo={{x}}\n", 0o644)
	if err := os.MkdirAll(w+"/out/etc", 0o755); err != nil {
		t.Fatal(err)
	}
	tc.setup(t, w)
	before, _, err := difftest.Snapshot(w, w)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, nil, prog, "-t", w+"/t", "-o", w+"/out", "-m", w+"/md.json")
	lines, files, err := difftest.Snapshot(w, w)
	if err != nil {
		t.Fatal(err)
	}
	return difftest.Outcome{Code: r.code, Stdout: r.stdout, Stderr: strings.ReplaceAll(r.stderr, w, "W"), Tree: lines, Files: files}, before
}

// linkedOutside is a setup: link (in the work dir) is a relative link
// to outside/name, a file of body and mode.
func linkedOutside(link, name, body string, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, w string) {
		write(t, w+"/outside/"+name, body, mode)
		target, err := filepath.Rel(filepath.Dir(w+"/"+link), w+"/outside/"+name)
		if err != nil {
			t.Fatal(err)
		}
		symlink(t, target, w+"/"+link)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
