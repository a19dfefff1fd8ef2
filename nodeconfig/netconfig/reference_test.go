package netconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// referenceElements is the tripleo-image-elements checkout, of those
// TRIPLEO_IMAGE_ELEMENTS names (colon separated, as for the other node
// steps), that has the element, when the reference can run here (root,
// unshare and Debian's python3-os-apply-config); "" and why not
// otherwise.
func referenceElements() (string, string) {
	list := os.Getenv("TRIPLEO_IMAGE_ELEMENTS")
	if list == "" {
		return "", "TRIPLEO_IMAGE_ELEMENTS is not set: the reference is not rerun"
	}
	ref := ""
	for _, d := range filepath.SplitList(list) {
		if _, err := os.Stat(filepath.Join(d, "elements/os-net-config/os-refresh-config/configure.d/20-os-net-config")); err == nil {
			ref = d
			break
		}
	}
	if ref == "" {
		return "", "no checkout in TRIPLEO_IMAGE_ELEMENTS=" + list + " has elements/os-net-config"
	}
	if os.Geteuid() != 0 {
		return "", "the reference runs in a private mount namespace: root only"
	}
	for _, tool := range []string{"/usr/bin/os-apply-config", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", tool + " is missing"
		}
	}
	return ref, ""
}

// runReference runs the reference element's script on the case in dir
// (testdata/run-reference.sh) and returns what it did.
func runReference(t *testing.T, ref, dir string) outcome {
	t.Helper()
	script, _ := filepath.Abs("testdata/run-reference.sh")
	out := t.TempDir()
	if b, err := exec.Command(script, ref, dir, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", script, err, b)
	}
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(out, f)); return string(b) }
	want := outcome{status: strings.TrimSpace(read("status")), stdout: read("stdout"), log: read("log"),
		stderr: messages(read("stderr"))}
	want.etc, want.safeDefaults = etcFiles(t, filepath.Join(out, "upper"))
	t.Logf("reference: exit %s, stderr %q, commands:\n%s", want.status, read("stderr"), want.log)
	return want
}

// TestReference runs the reference element's script on every case, when
// TRIPLEO_IMAGE_ELEMENTS names a checkout of tripleo-image-elements, and
// compares it with ours. It needs root (a private mount namespace with
// an overlay on /etc) and Debian's python3-os-apply-config. With
// UPDATE_GOLDEN=1 it records the reference's outcome as expected/ (and
// our outcome for the bad-* and fixed-* cases).
func TestReference(t *testing.T) {
	ref, why := referenceElements()
	if ref == "" {
		t.Skip(why)
	}
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	for _, name := range caseNames(t) {
		t.Run(name, func(t *testing.T) {
			dir, _ := filepath.Abs(filepath.Join("testdata/cases", name))
			want := runReference(t, ref, dir)
			got := runOurs(t, name)
			if strings.HasPrefix(name, "bad-") || strings.HasPrefix(name, "fixed-") {
				// We refuse what the reference ran, or do on purpose
				// what it did wrong (docs/compat.md); the log shows it.
				want = got
			}
			if update {
				exp := filepath.Join("testdata/cases", name, "expected")
				os.RemoveAll(exp)
				os.MkdirAll(exp, 0o755)
				for f, s := range map[string]string{"status": want.status, "stdout": want.stdout, "stderr": want.stderr, "log": want.log, "etc.txt": want.etc} {
					os.WriteFile(filepath.Join(exp, f), []byte(s), 0o644)
				}
				if want.safeDefaults != nil {
					os.WriteFile(filepath.Join(exp, "dhcp_all_interfaces.yaml"), want.safeDefaults, 0o644)
				}
			}
			got.compare(t, want)
		})
	}
}

// messages are the script's own lines on stderr: not set -x's trace
// (which run-reference.sh sends elsewhere; a line starting with "+" is
// left out all the same), and not cat's complaint about a sysfs file
// that cannot be read (a down interface's carrier), which we read
// without a word.
func messages(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if l != "" && !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "cat: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
