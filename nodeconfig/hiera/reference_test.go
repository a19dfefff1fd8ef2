package hiera

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReference runs the reference element's script on every case, when
// TRIPLEO_PUPPET_ELEMENTS names a checkout of tripleo-puppet-elements at
// cbc5be9^ (the commit before the element's removal), and compares what
// it left in /etc/puppet with ours. It needs root (a private mount
// namespace), Debian's python3-os-apply-config and jq. With
// UPDATE_GOLDEN=1 it records the reference's trees as expected/, our
// warnings beside them, and our error lines for the bad-* cases.
func TestReference(t *testing.T) {
	ref := os.Getenv("TRIPLEO_PUPPET_ELEMENTS")
	if ref == "" {
		t.Skip("TRIPLEO_PUPPET_ELEMENTS is not set: the reference is not rerun")
	}
	if os.Geteuid() != 0 {
		t.Skip("the reference runs in a private mount namespace: root only")
	}
	for _, tool := range []string{"/usr/bin/os-apply-config", "/usr/bin/jq", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing", tool)
		}
	}
	script, _ := filepath.Abs("testdata/run-reference.sh")
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	for _, name := range caseNames(t) {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			prepare(t, name, filepath.Join(out, "puppet"))
			md, _ := filepath.Abs(filepath.Join("testdata/cases", name, "metadata.json"))
			if b, err := exec.Command(script, ref, md, out).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v %s", script, err, b)
			}
			status, _ := os.ReadFile(filepath.Join(out, "status"))
			stderr, _ := os.ReadFile(filepath.Join(out, "stderr"))
			t.Logf("reference: exit %s stderr %q", strings.TrimSpace(string(status)), stderr)
			root := t.TempDir()
			r := runOurs(t, name, root)
			exp := filepath.Join("testdata/cases", name, "expected")
			if strings.HasPrefix(name, "bad-") {
				if update {
					os.MkdirAll(exp, 0o755)
					os.WriteFile(filepath.Join(exp, "error"), []byte(r.stderr), 0o644)
				}
				return // we refuse these; what the reference did is in the log
			}
			if strings.TrimSpace(string(status)) != "0" {
				t.Errorf("reference exit %s: %s", status, stderr)
			}
			if update {
				os.RemoveAll(exp)
				os.MkdirAll(exp, 0o755)
				list, _ := tree(t, filepath.Join(out, "puppet"))
				os.WriteFile(filepath.Join(exp, "tree.txt"), []byte(list), 0o644)
				if b, err := exec.Command("cp", "-r", filepath.Join(out, "puppet"), exp).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v %s", err, b)
				}
				if r.stderr != "" {
					os.WriteFile(filepath.Join(exp, "stderr"), []byte(r.stderr), 0o644)
				}
			}
			compareTrees(t, "ours vs reference", filepath.Join(root, "etc/puppet"), filepath.Join(out, "puppet"))
		})
	}
}
