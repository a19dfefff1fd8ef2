package applyconfig

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
)

type run struct {
	code           int
	stdout, stderr string
}

// oac runs the command in-process with a scratch root and the given
// environment variables.
func oac(t *testing.T, root string, vars map[string]string, args ...string) run {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{
		Stdout: &stdout, Stderr: &stderr, Root: root,
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Now:       func() time.Time { return time.Date(2026, 11, 22, 16, 5, 9, 0, time.UTC) },
	}
	err := Run(context.Background(), args, env)
	return run{exitcode.Of(err), stdout.String(), stderr.String()}
}

// tree writes files (path → body) under dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func oneLine(t *testing.T, stderr string) {
	t.Helper()
	if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 || strings.Contains(stderr, "Traceback") {
		t.Fatalf("want one log line, got:\n%s", stderr)
	}
}

func TestRendersAndLogsInReferenceFormat(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"t/etc/a.conf": "x={{x}}\n", "md.json": `{"x": "foo"}`})
	r := oac(t, dir, nil, "-t", dir+"/t", "-o", dir+"/out", "-m", dir+"/md.json", "--fallback-metadata")
	if r.code != 0 || read(t, dir+"/out/etc/a.conf") != "x=foo\n" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.stderr, "[2026/11/22 04:05:09 PM] [INFO] writing "+dir+"/out/etc/a.conf\n") ||
		!strings.HasSuffix(r.stderr, "[INFO] success\n") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}

// Deliberate improvement (docs/compat.md): the reference dies with a
// traceback on an unknown --type.
func TestUnknownTypeIsOneLineError(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"md.json": `{"x": "foo"}`})
	r := oac(t, dir, nil, "-m", dir+"/md.json", "--fallback-metadata", "--key", "x", "--type", "colour")
	if r.code != exitcode.Failure || !strings.Contains(r.stderr, "[ERROR] requested validation of unknown type: colour") {
		t.Fatalf("%+v", r)
	}
	oneLine(t, r.stderr)
}

// Deliberate improvement: a YAML syntax error in a .oac is a one-line error
// naming the template, not a traceback, and nothing is written.
func TestYAMLSyntaxErrorInControlFile(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"t/a": "a", "t/b": "b", "t/b.oac": "mode: [0644\n", "md.json": `{}`, "out/a": "old",
	})
	r := oac(t, dir, nil, "-t", dir+"/t", "-o", dir+"/out", "-m", dir+"/md.json", "--fallback-metadata")
	if r.code != exitcode.Failure || !strings.Contains(r.stderr, "[ERROR] (\"invalid YAML: line 1:") || !strings.Contains(r.stderr, "'"+dir+"/t/b')") {
		t.Fatalf("%+v", r)
	}
	oneLine(t, r.stderr)
	if read(t, dir+"/out/a") != "old" {
		t.Fatal("out/a changed")
	}
}

// Deliberate improvement: an os_config_files.json that is not a list is a
// one-line error (exit 1), not a traceback.
func TestOSConfigFilesNotAList(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"list.json": `{"a": 1}`})
	r := oac(t, dir, nil, "--os-config-files", dir+"/list.json", "--fallback-metadata", "-t", dir, "-o", dir+"/out")
	if r.code != exitcode.Failure || !strings.Contains(r.stderr, "[ERROR] No list defined in json file: "+dir+"/list.json") {
		t.Fatalf("%+v", r)
	}
	oneLine(t, r.stderr)
}

// Deliberate improvement: no log file unless asked for with --log-file.
func TestLogFileOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"t/a": "a", "md.json": `{}`})
	log := filepath.Join(dir, "oac.log")
	r := oac(t, dir, nil, "-t", dir+"/t", "-o", dir+"/out", "-m", dir+"/md.json", "--fallback-metadata", "--log-file", log)
	if r.code != 0 || !strings.Contains(read(t, log), "[INFO] success") {
		t.Fatalf("%+v", r)
	}
	src, err := os.ReadFile("applyconfig.go")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(src, []byte("/var/log")) {
		t.Fatal("the command names a /var/log path")
	}
}

// Bad input: each is a one-line error naming the file, exit 1, and the
// previously rendered file is untouched.
func TestBadInputChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"invalid metadata JSON", map[string]string{"md.json": `{"x": `}, "Could not parse metadata file: DIR/md.json"},
		{"metadata is a directory", map[string]string{"md.json/x": ``}, "Could not open DIR/md.json for reading. [Errno 21] Is a directory"},
		{"mismatched section", map[string]string{"t/b": "{{#a}}{{/b}}"}, "[ERROR] Section end tag mismatch: b != a"},
		{"invalid .oac", map[string]string{"t/b.oac": "mode: 644"}, "[ERROR] (\"mode '0o1204' out of range\", 'DIR/t/b')"},
		{"unknown .oac key", map[string]string{"t/b.oac": "colour: red"}, "unrecognised file control key 'colour'"},
		{"output cannot be written", map[string]string{"t/sub/c": "c", "out/sub": "a file, not a dir"}, "could not write DIR/out/sub/c"},
		// Files are staged as they render: a failure after many have been
		// staged, in new directories, takes them all back.
		{"late template error", stagedBefore("t/m", "{{#a}}{{/b}}"), "[ERROR] Section end tag mismatch: b != a"},
		{"late output error", stagedBefore("out/new/m", "a file, not a dir"), "could not write DIR/out/new/m/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"t/a": "new {{x}}", "t/b": "b", "out/a": "old", "md.json": `{"x": 1}`}
			for k, v := range tc.files {
				files[k] = v
			}
			if _, ok := tc.files["md.json/x"]; ok {
				delete(files, "md.json")
			}
			tree(t, dir, files)
			before := paths(dir + "/out")
			r := oac(t, dir, nil, "-t", dir+"/t", "-o", dir+"/out", "-m", dir+"/md.json", "--fallback-metadata")
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if r.code != exitcode.Failure || !strings.Contains(r.stderr, want) {
				t.Fatalf("code %d, want %q in:\n%s", r.code, want, r.stderr)
			}
			if read(t, dir+"/out/a") != "old" {
				t.Fatal("out/a changed")
			}
			if _, err := os.Stat(dir + "/out/b"); err == nil {
				t.Fatal("out/b written")
			}
			// A render error leaves out/ as it was. A write error leaves
			// the directories of the files before the failing one, as a
			// run in order would have (empty), and nothing else.
			for p := range strings.SplitSeq(paths(dir+"/out"), "\n") {
				if st, err := os.Stat(p); strings.Contains(before+"\n", p+"\n") ||
					strings.HasPrefix(tc.want, "could not write") && err == nil && st.IsDir() && p < dir+"/out/new/m" {
					continue
				}
				t.Errorf("left behind: %s", p)
			}
		})
	}
}

// paths lists every path under dir, one a line.
func paths(dir string) string {
	var out []string
	filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		out = append(out, p)
		return nil
	})
	return strings.Join(out, "\n")
}

// stagedBefore is a tree of 60 templates in new directories, each staged
// before or while the one at path fails.
func stagedBefore(path, body string) map[string]string {
	files := map[string]string{path: body}
	for i := range 60 {
		files[fmt.Sprintf("t/new/%c/%d/x", 'a'+i%26, i)] = "x"
	}
	if strings.HasPrefix(path, "out/") {
		files["t/new/m/x"] = "x"
	}
	return files
}

func TestDefaultTemplatesDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dirs    []string
		env     map[string]string
		want    string
		warning bool
	}{
		{"nothing exists", nil, nil, DefaultTemplatesDir, false},
		{"env wins", []string{DefaultTemplatesDir}, map[string]string{"OS_CONFIG_APPLIER_TEMPLATES": "/x"}, "/x", false},
		{"deprecated only", []string{deprecatedTemplatesDir}, nil, deprecatedTemplatesDir, true},
		{"old deprecated only", []string{oldTemplatesDir}, nil, oldTemplatesDir, true},
		{"both: standard wins", []string{DefaultTemplatesDir, deprecatedTemplatesDir}, nil, DefaultTemplatesDir, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tc.dirs {
				os.MkdirAll(root+d, 0o755)
			}
			r := oac(t, root, tc.env, "--print-templates")
			want := tc.want
			if !strings.HasPrefix(want, "/x") {
				want = root + want
			}
			if r.stdout != want+"\n" || strings.Contains(r.stderr, "deprecated") != tc.warning {
				t.Fatalf("%+v", r)
			}
		})
	}
}

func TestDeprecatedOSConfigFilesFallback(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{
		"var/run/os-collect-config/os_config_files.json": `["` + root + `/md.json"]`,
		"md.json": `{"k": "v"}`,
	})
	r := oac(t, root, nil, "--key", "k", "--fallback-metadata")
	if r.code != 0 || r.stdout != "v\n" || !strings.Contains(r.stderr, "[WARNING] DEPRECATED: falling back to "+root+"/var/run/os-collect-config/os_config_files.json") {
		t.Fatalf("%+v", r)
	}
}

func TestKeyAndBooleanKey(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"md.json": `{"t": true, "f": false, "s": "true", "l": [1, 2], "d": {"a": 1}, "x": "foo"}`})
	md := dir + "/md.json"
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"--boolean-key", "t"}, 0, ""},
		{[]string{"--boolean-key", "f"}, 1, ""},
		{[]string{"--boolean-key", "s"}, 255, ""},
		{[]string{"--boolean-key", "missing"}, 255, ""},
		{[]string{"--key", "l", "--type", "raw"}, 0, "[1, 2]\n"},
		{[]string{"--key", "l"}, 1, ""},
		{[]string{"--key", "d", "--type", "raw"}, 0, "{\"a\": 1}\n"},
		{[]string{"--key", "l.1", "--type", "int"}, 0, "2\n"},
		{[]string{"--key", "nope", "--key-default", ""}, 0, "\n"},
		{[]string{"--key", "x", "--boolean-key", "t"}, 0, "foo\n"},
	} {
		r := oac(t, dir, nil, append([]string{"-m", md, "--fallback-metadata"}, tc.args...)...)
		if r.code != tc.code || r.stdout != tc.stdout {
			t.Errorf("%v: got %d %q, want %d %q (%s)", tc.args, r.code, r.stdout, tc.code, tc.stdout, r.stderr)
		}
	}
}

func TestUsageErrorIsExit2(t *testing.T) {
	r := oac(t, t.TempDir(), nil, "--ke", "x")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "ambiguous option: --ke could match --key, --key-default") {
		t.Fatalf("%+v", r)
	}
	r = oac(t, t.TempDir(), nil, "stray")
	if r.code != exitcode.Usage || !strings.Contains(r.stderr, "unrecognized arguments: stray") {
		t.Fatalf("%+v", r)
	}
}
