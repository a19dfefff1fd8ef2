package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tinyCorpus writes a template tree and three metadata layers that
// exercise what the bound must get right: deep merge in order, dotted
// names, list sections, no HTML escaping, missing names, .oac modes and
// allow_empty. It returns the template root and the metadata paths.
func tinyCorpus(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"templates/etc/a/a.conf": "[DEFAULT]\nhost = {{a.host}}\nport = {{a.port}}\n" +
			"{{#a.list}}- {{.}}\n{{/a.list}}region = {{global.region}}\nhtml = {{a.html}}\n",
		"templates/etc/a/secrets.conf":     "password = {{a.password}}\n",
		"templates/etc/a/secrets.conf.oac": "# for the service only\nmode: 0600\n",
		"templates/etc/a/opt/x.conf":       "{{#a.flag}}on{{/a.flag}}",
		"templates/etc/a/opt/x.conf.oac":   "allow_empty: false\n",
		"templates/etc/b/empty.conf":       "{{missing.key}}",
		"metadata/00.json":                 `{"global": {"region": "r1"}, "a": {"host": "h0", "port": 1, "password": "p0"}}`,
		"metadata/10.json":                 `{"a": {"host": "h1", "list": ["x", "y"]}}`,
		"metadata/20.json":                 `{"a": {"password": "s3cret", "flag": false, "html": "<&>"}}`,
	}
	for name, body := range files {
		if err := writeFile(filepath.Join(dir, name), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	meta := []string{"00.json", "10.json", "20.json"}
	for i, m := range meta {
		meta[i] = filepath.Join(dir, "metadata", m)
	}
	return filepath.Join(dir, "templates"), meta
}

// tinyWant is what the tiny corpus renders to: no etc/a/opt, since its
// only file renders empty and may not be.
var tinyWant = map[string]struct {
	mode fs.FileMode
	body string
}{
	"etc/a/a.conf":       {0o644, "[DEFAULT]\nhost = h1\nport = 1\n- x\n- y\nregion = r1\nhtml = <&>\n"},
	"etc/a/secrets.conf": {0o600, "password = s3cret\n"},
	"etc/b/empty.conf":   {0o644, ""},
}

func checkTinyTree(t *testing.T, out string) {
	t.Helper()
	tree, err := snapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	for p, e := range tree {
		if e.mode.IsDir() {
			continue
		}
		w, ok := tinyWant[p]
		switch {
		case !ok:
			t.Errorf("%s: not expected", p)
		case e.mode != w.mode:
			t.Errorf("%s: mode %v, want %v", p, e.mode, w.mode)
		case string(e.data) != w.body:
			t.Errorf("%s: %q, want %q", p, e.data, w.body)
		}
	}
	if n := countFiles(tree); n != len(tinyWant) {
		t.Errorf("%d files, want %d", n, len(tinyWant))
	}
	if _, ok := tree["etc/a/opt"]; ok {
		t.Errorf("etc/a/opt made, though nothing is written in it")
	}
}

func TestFreshBoundWrites(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	templates, meta := tinyCorpus(t)
	out := t.TempDir()
	d, err := freshBound(templates, meta)(out)
	if err != nil {
		t.Fatal(err)
	}
	if d <= 0 {
		t.Errorf("duration %v", d)
	}
	checkTinyTree(t, out)
}

// The parts, run one after the other, write the same tree.
func TestBoundPartsWrite(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	templates, meta := tinyCorpus(t)
	out := t.TempDir()
	p, err := measureBoundParts(templates, meta, out)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range p.list() {
		if d <= 0 {
			t.Errorf("part %s: duration %v", partNames[i], d)
		}
	}
	checkTinyTree(t, out)
}

func TestFreshBoundErrors(t *testing.T) {
	templates, meta := tinyCorpus(t)
	tests := []struct {
		name, file, body, want string
	}{
		{"bad metadata", meta[1], `{"a": `, "10.json"},
		{"bad template", filepath.Join(templates, "etc/b/empty.conf"), "{{#a}}", "etc/b/empty.conf"},
		{"bad mode", filepath.Join(templates, "etc/a/secrets.conf.oac"), "mode: 0x9", `mode "0x9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(tc.file, orig, 0o644)
			if err := os.WriteFile(tc.file, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = freshBound(templates, meta)(t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

// On the benchmark's own corpus the bound writes every template but the
// optional ones left empty, with their control files' modes.
func TestFreshBoundCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("writes the whole corpus")
	}
	c := buildCorpus(1)
	paths, err := c.write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := freshBound(paths.templates, paths.meta)(out); err != nil {
		t.Fatal(err)
	}
	tree, err := snapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range c.templates {
		e, ok := tree[tm.path]
		switch {
		case !ok && !strings.Contains(tm.oac, "allow_empty: false"):
			t.Errorf("%s: not written", tm.path)
		case ok && strings.Contains(tm.oac, "mode: 0600") && e.mode.Perm() != 0o600:
			t.Errorf("%s: mode %v, want 0600", tm.path, e.mode)
		case ok && tm.oac == "" && e.mode.Perm() != 0o644:
			t.Errorf("%s: mode %v, want 0644", tm.path, e.mode)
		}
	}
	if n := countFiles(tree); n < len(c.templates)*9/10 {
		t.Errorf("%d files of %d templates", n, len(c.templates))
	}
}

// The report gives the bound a column and says per case how far it is
// from the floor, then where the bound's time goes.
func TestPrintReportBound(t *testing.T) {
	parts := []boundParts{{decode: 10 * time.Millisecond, read: 5 * time.Millisecond, parse: 8 * time.Millisecond,
		render: 12 * time.Millisecond, write: 20 * time.Millisecond}}
	var b bytes.Buffer
	printReport(&b, buildCorpus(1), []caseResult{
		{name: "fresh", ref: ms(1200), ours: ms(124), floor: ms(20), bound: ms(62), parts: parts}, // 3.1x the floor
		{name: "other", ref: ms(1200), ours: ms(60), floor: ms(20), bound: ms(50)},                // 2.5x
		{name: "steady", ref: ms(1200), ours: ms(40), floor: ms(10)},                              // no bound
	})
	out := b.String()
	for _, want := range []string{
		"bound ms", "ours/bound", "62.0", "2.00x", "ours/bound <=1.5x MISS",
		"fresh: bound 62.0 ms = 3.1x the floor\n",
		"other: bound 50.0 ms = 2.5x the floor\n",
		"fresh: bound's parts, each alone (median of 1; x the floor): decode 10.0 ms (0.5x), read 5.0 ms (0.2x), " +
			"parse 8.0 ms (0.4x), render 12.0 ms (0.6x), write+syncfs 20.0 ms (1.0x); sum 55.0 ms (2.8x)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "steady: bound") || strings.Contains(out, "TARGET") {
		t.Errorf("a bound line too many:\n%s", out)
	}
}

// The test binary plays oacbench's bound worker, so runBoundWorker can
// run it as the benchmark runs itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerFlag {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestBoundWorker(t *testing.T) {
	templates, meta := tinyCorpus(t)
	for mode, n := range map[string]int{"bound": 1, "parts": len(partNames)} {
		t.Run(mode, func(t *testing.T) {
			out := t.TempDir()
			ds, err := runBoundWorker(mode, out, templates, meta)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != n {
				t.Errorf("%d durations, want %d", len(ds), n)
			}
			checkTinyTree(t, out)
		})
	}
	t.Run("steady", func(t *testing.T) {
		out := t.TempDir()
		if _, err := freshBound(templates, meta)(out); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"steady", "steady-syncfs", "steady-fdatasync"} {
			ds, err := runBoundWorker(mode, out, templates, meta)
			if err != nil || len(ds) != 2 || ds[0] <= 0 || ds[1] != 0 {
				t.Errorf("%s: %v, %v; want a duration and 0 changed", mode, ds, err)
			}
		}
		checkTinyTree(t, out)
	})
	_, err := runBoundWorker("other", t.TempDir(), templates, meta)
	if err == nil || !strings.Contains(err.Error(), "bound|parts|steady") {
		t.Errorf("error %v, want the usage", err)
	}
}

// compareBound accepts other bodies, counting them, and nothing else.
func TestCompareBound(t *testing.T) {
	templates, meta := tinyCorpus(t)
	out := t.TempDir()
	if _, err := freshBound(templates, meta)(out); err != nil {
		t.Fatal(err)
	}
	ours, err := snapshot(out)
	if err != nil {
		t.Fatal(err)
	}
	files, bodies, err := compareBound(out, ours)
	if err != nil || files != 3 || bodies != 0 {
		t.Errorf("same tree: %d files, %d bodies differ, %v", files, bodies, err)
	}
	e := ours["etc/a/a.conf"]
	ours["etc/a/a.conf"] = entry{mode: e.mode, data: []byte("host = h1\n")}
	if _, bodies, err = compareBound(out, ours); err != nil || bodies != 1 {
		t.Errorf("one other body: %d bodies differ, %v", bodies, err)
	}
	ours["etc/a/a.conf"] = entry{mode: 0o640, data: e.data}
	if _, _, err = compareBound(out, ours); err == nil || !strings.Contains(err.Error(), "etc/a/a.conf: mode") {
		t.Errorf("other mode: %v", err)
	}
	ours["etc/a/a.conf"] = e
	ours["etc/c"] = entry{mode: fs.ModeDir | 0o755}
	if _, _, err = compareBound(out, ours); err == nil || !strings.Contains(err.Error(), "wrote 6 paths, ours 7") {
		t.Errorf("a path missing: %v", err)
	}
}
