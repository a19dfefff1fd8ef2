package hiera

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// 10-hiera-disable retires the element's pieces only when hiera.yaml is
// the hook's (no "yaml" in it), as the element's script did.
func TestDisable(t *testing.T) {
	const hookConfig = "\n---\n:backends:\n  - json\n:json:\n  :datadir: /etc/puppet/hieradata\n:hierarchy:\n  - common\n"
	const elementConfig = "---\n:backends:\n  - json\n  - yaml\n"
	pieces := []string{
		"usr/libexec/os-apply-config/templates/etc/puppet/hiera.yaml",
		"usr/libexec/os-refresh-config/configure.d/40-hiera-datafiles",
		"etc/puppet/hieradata/common.yaml", "etc/puppet/hieradata/controller.yaml",
	}
	kept := []string{"etc/puppet/hieradata/common.json", "etc/puppet/hieradata/.hidden.yaml"}
	for _, tc := range []struct {
		name, config string // config: "" for no hiera.yaml
		removed      bool
	}{
		{"hook's configuration", hookConfig, true},
		{"element's configuration", elementConfig, false},
		{"no configuration", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range append(append([]string(nil), pieces...), kept...) {
				os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
				os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644)
			}
			if tc.config != "" {
				os.WriteFile(filepath.Join(root, "etc/puppet/hiera.yaml"), []byte(tc.config), 0o600)
			}
			var stderr bytes.Buffer
			if err := Disable(context.Background(), nil, Env{Stderr: &stderr, Environ: []string{RootVar + "=" + root}}); err != nil {
				t.Fatalf("%v %s", err, stderr.String())
			}
			for _, p := range pieces {
				_, err := os.Stat(filepath.Join(root, p))
				if gone := os.IsNotExist(err); gone != tc.removed {
					t.Errorf("%s: removed %v, want %v", p, gone, tc.removed)
				}
			}
			for _, p := range kept {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
	}
}
