package hooks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// §2.5: each declared output is the whole content of
// <heat_outputs_path>.<name>, read as Python's text mode reads it; a
// missing file leaves the output out; undeclared files are never read;
// the outputs come before the deploy_ keys, and an output named like one
// of them keeps its place and loses its value, as in the reference's dict.
func TestResultReadsDeclaredOutputs(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"1.crlf": "a\r\nb\r", "1.empty": "", "1.undeclared": "x", "1.deploy_stdout": "from a file",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "1.dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := deployment.Parse([]byte(`{"id": "1", "group": "script", "inputs": [], "outputs": [
		{"name": "crlf"}, {"name": "missing"}, {"name": "empty"}, {"name": "dir"}, {"name": "deploy_stdout"}, {"nameless": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res := hooks.Result(d, filepath.Join(dir, "1"), hooks.Outcome{Stdout: "out", Stderr: "err", Status: 2})
	want := `{"crlf": "a\nb\n", "empty": "", "deploy_stdout": "out", "deploy_stderr": "err", "deploy_status_code": 2}`
	if got := jsondoc.Dumps(res); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// Directories are created 0700 (parents with the default mode), an
// existing one is left as it is; files are truncated and get the mode
// asked even when they existed with another.
func TestPrepareDirAndWriteFile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "parent", "dir")
	if err := hooks.PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %o", m)
	}
	plain := filepath.Join(base, "plain")
	if err := os.Mkdir(plain, 0o777); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Dir(dir)); m != mode(t, plain) {
		t.Errorf("parent mode %o, want the default %o", m, mode(t, plain))
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := hooks.PrepareDir(dir); err != nil || mode(t, dir) != 0o755 {
		t.Errorf("existing dir: %v, mode %o", err, mode(t, dir))
	}
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("a long old content"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := hooks.WriteFile(f, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "new" || mode(t, f) != 0o600 {
		t.Errorf("file %q mode %o", b, mode(t, f))
	}
	if err := hooks.PrepareDir(f); err == nil {
		t.Error("PrepareDir over a file: no error")
	}
}

func mode(t *testing.T, p string) os.FileMode {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
