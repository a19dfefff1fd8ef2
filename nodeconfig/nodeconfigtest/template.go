package nodeconfigtest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/applyconfig/control"
)

// SameRenders checks that an element's os-apply-config templates render
// the same bytes, with the same modes, under our os-apply-config as under
// Debian's Python os-apply-config 12.0.0, for each metadata document of
// cases (by name). Skipped under -short, and when the reference is not
// installed (a failure instead with REQUIRE_REAL_TOOLS=1).
func SameRenders(t *testing.T, templates string, cases map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the Python os-apply-config (seconds)")
	}
	const python = "/usr/bin/os-apply-config"
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
			t.Fatalf("%s: %v", python, err)
		}
		t.Skip("Debian's python3-os-apply-config is not installed")
	}
	templates, _ = filepath.Abs(templates)
	for name, md := range cases {
		t.Run(name, func(t *testing.T) {
			mdPath := filepath.Join(t.TempDir(), "md.json")
			if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
				t.Fatal(err)
			}
			ref, ours := t.TempDir(), t.TempDir()
			cmd := exec.Command(python, "-t", templates, "-o", ref, "-m", mdPath)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + t.TempDir()}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("reference: %v %s", err, out)
			}
			var stdout, stderr bytes.Buffer
			env := applyconfig.Env{Stdout: &stdout, Stderr: &stderr, Root: t.TempDir(), Accounts: control.SystemAccounts{},
				LookupEnv: func(string) (string, bool) { return "", false }}
			if err := applyconfig.Run(context.Background(), []string{"-t", templates, "-o", ours, "-m", mdPath}, env); err != nil {
				t.Fatalf("ours: %v %s", err, stderr.String())
			}
			if got, want := listing(ours), listing(ref); got != want {
				t.Errorf("ours:\n%s\nreference:\n%s", got, want)
			}
		})
	}
}

// listing is every file under d with its mode and bytes.
func listing(d string) string {
	var b bytes.Buffer
	filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, _ := e.Info()
		data, _ := os.ReadFile(path)
		rel, _ := filepath.Rel(d, path)
		fmt.Fprintf(&b, "%s %04o %q\n", rel, fi.Mode().Perm(), data)
		return nil
	})
	return b.String()
}

// Render renders an element's os-apply-config templates with our
// os-apply-config, for the metadata file md, into the directory out (a
// node's root: out/etc/...), as 20-os-apply-config does before a
// configure step runs. An error is os-apply-config's (on such metadata
// the configure phase stops before the step).
func Render(t testing.TB, templates, md, out string) error {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := applyconfig.Env{Stdout: &stdout, Stderr: &stderr, Root: t.TempDir(), Accounts: control.SystemAccounts{},
		LookupEnv: func(string) (string, bool) { return "", false }}
	if err := applyconfig.Run(context.Background(), []string{"-t", templates, "-o", out, "-m", md}, env); err != nil {
		return fmt.Errorf("os-apply-config: %v %s", err, stderr.String())
	}
	return nil
}
