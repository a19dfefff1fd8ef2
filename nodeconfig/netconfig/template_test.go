package netconfig

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

// The element's os-apply-config template renders the same bytes, with
// the same mode, under our os-apply-config as under Debian's Python
// os-apply-config 12.0.0 (skipped when it is not installed, unless
// REQUIRE_REAL_TOOLS=1).
func TestTemplateRendersAsTheReference(t *testing.T) {
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
	templates, _ := filepath.Abs("../../elements/os-net-config/os-apply-config")
	for name, md := range map[string]string{
		"object":       `{"os_net_config": {"network_config": [{"type": "ovs_bridge", "name": "br-ctlplane", "use_dhcp": true, "members": [{"type": "interface", "name": "em1", "primary": true}]}]}}`,
		"string":       `{"os_net_config": "network_config:\n  - type: interface\n    name: eth0"}`,
		"odd values":   `{"os_net_config": {"network_config": [], "x": 1.0, "y": 1e100, "z": "caf\u00e9 <&>", "n": null}}`,
		"list":         `{"os_net_config": [1, 2]}`,
		"empty object": `{"os_net_config": {}}`,
		"no key":       `{"other": 1}`,
	} {
		t.Run(name, func(t *testing.T) {
			mdPath := filepath.Join(t.TempDir(), "md.json")
			os.WriteFile(mdPath, []byte(md), 0o644)
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
			if got, want := listing(t, ours), listing(t, ref); got != want {
				t.Errorf("ours:\n%s\nreference:\n%s", got, want)
			}
		})
	}
}

// listing is every file under dir with its mode and bytes.
func listing(t *testing.T, dir string) string {
	var b bytes.Buffer
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, _ := d.Info()
		data, _ := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s %04o %q\n", rel, fi.Mode().Perm(), data)
		return nil
	})
	return b.String()
}
