package jsonfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/jsonfile"
)

func TestMain(m *testing.M) { hooktest.Main(m, jsonfile.Hook) }

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// test_hook_json_file.py::test_hook: each config key is a path written
// with its data as indented JSON; the result is an empty success.
func TestHook(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "conf")
	r := hooktest.Run(t, jsonfile.Hook, `{"id": "test_json_file", "name": "fake_resource_name", "group": "json-file",
		"config": {`+quote(conf)+`: {"command": "foo"}}}`, nil)
	want := `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": 0}`
	if r.Code != 0 || r.Stdout != want {
		t.Fatalf("exit %d, stdout %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := hooktest.ReadFile(t, conf); got != "{\n    \"command\": \"foo\"\n}" {
		t.Errorf("file %q", got)
	}
}

// Missing directories are created 0700; files are truncated, keep an
// existing file's mode, and get the default mode when new; values of any
// JSON type are written, keys sorted.
func TestFilesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b", "deep.json")
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(strings.Repeat("old content ", 20)), 0o640); err != nil {
		t.Fatal(err)
	}
	r := hooktest.Run(t, jsonfile.Hook, `{"id": "1", "group": "json-file", "inputs": [], "config": {`+
		quote(deep)+`: [1, "é"], `+quote(old)+`: {"b": null, "a": 2.5}}}`, nil)
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if got := hooktest.ReadFile(t, deep); got != "[\n    1,\n    \"\\u00e9\"\n]" {
		t.Errorf("deep %q", got)
	}
	if m := hooktest.Mode(t, filepath.Join(dir, "a", "b")); m != 0o700 {
		t.Errorf("created dir mode %o", m)
	}
	if got := hooktest.ReadFile(t, old); got != "{\n    \"a\": 2.5,\n    \"b\": null\n}" || hooktest.Mode(t, old) != 0o640 {
		t.Errorf("old %q mode %o", got, hooktest.Mode(t, old))
	}
}

// A null config writes nothing (the reference crashed); a config that is
// not an object of paths fails the hook with a message.
func TestUnusableConfig(t *testing.T) {
	r := hooktest.Run(t, jsonfile.Hook, `{"id": "1", "group": "json-file", "config": null}`, nil)
	if r.Code != 0 || r.JSON(t)["deploy_status_code"] != 0.0 {
		t.Errorf("null: exit %d %s", r.Code, r.Stdout)
	}
	r = hooktest.Run(t, jsonfile.Hook, `{"id": "1", "group": "json-file", "config": "/etc/x"}`, nil)
	if r.Code != 1 || !strings.Contains(r.Stderr, `[ERROR] unusable config: the json-file hook's config is "/etc/x", not an object of paths`) {
		t.Errorf("string: exit %d, log %s", r.Code, r.Stderr)
	}
}
