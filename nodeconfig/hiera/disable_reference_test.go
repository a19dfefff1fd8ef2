package hiera

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDisableAsTheReference runs the element's 10-hiera-disable (from
// TRIPLEO_PUPPET_ELEMENTS, as TestReference) in a private mount
// namespace with overlays on /etc and /usr/libexec, and compares which of
// the element's pieces are left with what ours leaves.
func TestDisableAsTheReference(t *testing.T) {
	ref := os.Getenv("TRIPLEO_PUPPET_ELEMENTS")
	if ref == "" {
		t.Skip("TRIPLEO_PUPPET_ELEMENTS is not set: the reference is not rerun")
	}
	if os.Geteuid() != 0 {
		t.Skip("the reference runs in a private mount namespace: root only")
	}
	pieces := []string{
		"usr/libexec/os-apply-config/templates/etc/puppet/hiera.yaml",
		"usr/libexec/os-refresh-config/configure.d/40-hiera-datafiles",
		"etc/puppet/hieradata/common.yaml", "etc/puppet/hieradata/b.yaml", "etc/puppet/hieradata/common.json",
		"etc/puppet/hiera.yaml",
	}
	for name, config := range map[string]string{
		"hook":    "\n---\n:backends:\n  - json\n:json:\n  :datadir: /etc/puppet/hieradata\n:hierarchy:\n  - common\n",
		"element": "---\n:backends:\n  - json\n  - yaml\n",
		"empty":   "",
	} {
		t.Run(name, func(t *testing.T) {
			// One tree for the reference's upper layers, one for ours.
			w, root := t.TempDir(), t.TempDir()
			for _, top := range []string{w, root} {
				for _, p := range pieces {
					full := filepath.Join(top, p)
					os.MkdirAll(filepath.Dir(full), 0o755)
					data := "x\n"
					if strings.HasSuffix(p, "puppet/hiera.yaml") && strings.HasPrefix(p, "etc") {
						data = config
					}
					os.WriteFile(full, []byte(data), 0o644)
				}
			}
			os.MkdirAll(filepath.Join(w, "work-etc"), 0o755)
			os.MkdirAll(filepath.Join(w, "work-libexec"), 0o755)
			var check strings.Builder
			for _, p := range pieces {
				check.WriteString(`[ -e /` + p + ` ] && echo ` + p + "\n")
			}
			script := filepath.Join(ref, "elements/hiera/10-hiera-disable")
			cmd := exec.Command("unshare", "-m", "--propagation", "private", "bash", "-c", `
				set -e
				mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc,workdir=$1/work-etc" /etc
				mount -t overlay overlay -o "lowerdir=/usr/libexec,upperdir=$1/usr/libexec,workdir=$1/work-libexec" /usr/libexec
				bash "$2" >/dev/null 2>&1
				set +e
				`+check.String()+`true`, "_", w, script)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("reference: %v %s", err, out)
			}
			var stderr bytes.Buffer
			if err := Disable(context.Background(), nil, Env{Stderr: &stderr, Environ: []string{RootVar + "=" + root}}); err != nil {
				t.Fatalf("%v %s", err, stderr.String())
			}
			var ours strings.Builder
			for _, p := range pieces {
				if _, err := os.Stat(filepath.Join(root, p)); err == nil {
					ours.WriteString(p + "\n")
				}
			}
			if ours.String() != string(out) {
				t.Errorf("left:\n%s\nthe reference left:\n%s", ours.String(), out)
			}
		})
	}
}
