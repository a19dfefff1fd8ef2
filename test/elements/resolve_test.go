// Package elements checks the diskimage-builder elements' package steps:
// how scripts/apply-elements resolves package-installs and pkg-map (the
// semantics of diskimage-builder's elements of those names) and its
// stand-ins of install-packages and pkg-map in the chroot (resolve_test.go,
// standins_test.go, names_test.go: no root), and the elements installing
// the package in a chroot of a copy of the Debian 12 rootfs
// test/systemd/lab.sh caches: with dpkg (chroot_test.go) and, Debian's rpm
// and dnf added to the copy (from Debian's mirror: the network), with rpm
// -Uvh and with dnf (rpm_test.go). Those need root and are skipped under
// -short and without the rootfs, unless REQUIRE_DEB=1.
package elements

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	applyElements = "../../scripts/apply-elements"
	elementsDir   = "../../elements"
	// systemPath runs apply-elements with the system's python3 (Debian's
	// python3-yaml), not a user's shims (a pyenv shim costs 0.3 s a run).
	systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// dryRun runs apply-elements -n on a scratch root whose os-release says
// ID=debian, with env on top of a clean environment; it returns stdout,
// stderr and the exit code.
func dryRun(t *testing.T, path string, env []string, elements ...string) (string, string, int) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	write(t, filepath.Join(root, "etc/os-release"), "ID=debian\n", 0o644)
	cmd := exec.Command(applyElements, append([]string{"-n", "-p", path, root}, elements...)...)
	cmd.Env = append([]string{"PATH=" + systemPath, "ARCH=amd64"}, env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// A pkg-map with every section, diskimage-builder's README example's
// shape: release over distro over family over default.
const exampleMap = `{
  "release": {"centos": {"8": {"tool": "tool-el8"}}},
  "distro": {"fedora": {"tool": "tool-fedora", "lib": "lib-one lib-two"}},
  "family": {
    "redhat": {"tool": "tool-redhat", "lib": "lib-devel", "gone": ""},
    "debian": {"lib": "libthing1"}
  },
  "default": {"tool": "tool", "lib": "lib"}
}`

func TestPkgMapResolution(t *testing.T) {
	path := t.TempDir()
	write(t, filepath.Join(path, "e/pkg-map"), exampleMap, 0o644)
	write(t, filepath.Join(path, "e/package-installs.yaml"), "tool:\nlib:\ngone:\nunmapped:\n", 0o644)
	for _, c := range []struct {
		distro, release string
		want            string // install.d's packages
	}{
		{"debian", "", "tool libthing1 gone unmapped"},
		{"ubuntu", "jammy", "tool libthing1 gone unmapped"},
		{"fedora", "39", "tool-fedora lib-one lib-two unmapped"},
		{"centos", "9-stream", "tool-redhat lib-devel unmapped"},
		{"centos", "8-stream", "tool-el8 lib-devel unmapped"},
		{"centos", "8", "tool-el8 lib-devel unmapped"},
		{"rhel", "9", "tool-redhat lib-devel unmapped"},
		{"rocky", "", "tool-redhat lib-devel unmapped"},
		{"almalinux", "", "tool-redhat lib-devel unmapped"},
		{"opensuse", "", "tool lib gone unmapped"},
		{"gentoo", "", "tool lib gone unmapped"},
	} {
		t.Run(c.distro+"-"+c.release, func(t *testing.T) {
			t.Parallel()
			out, errs, code := dryRun(t, path, []string{"DISTRO_NAME=" + c.distro, "DIB_RELEASE=" + c.release}, "e")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if lines[0] != "install.d install "+c.want {
				t.Errorf("got %q, want %q", lines[0], "install.d install "+c.want)
			}
		})
	}
}

// Without DISTRO_NAME the target's os-release names the distribution.
func TestDistroFromOSRelease(t *testing.T) {
	path := t.TempDir()
	write(t, filepath.Join(path, "e/pkg-map"), exampleMap, 0o644)
	write(t, filepath.Join(path, "e/package-installs.yaml"), "lib:\n", 0o644)
	out, errs, code := dryRun(t, path, nil, "e")
	if code != 0 || !strings.HasPrefix(out, "install.d install libthing1\n") {
		t.Errorf("exit %d, got %q (%s)", code, out, errs)
	}
}

func TestPackageInstallsSemantics(t *testing.T) {
	for _, c := range []struct {
		name     string
		elements map[string]string // element -> package-installs.yaml (.json if it starts with {)
		env      []string
		want     string
	}{
		{"phases in order, installs before removals", map[string]string{"a": "early:\n  phase: pre-install.d\nlate:\n  phase: post-install.d\nold:\n  uninstall: true\nmain:\n"}, nil,
			"pre-install.d install early\ninstall.d install main\ninstall.d uninstall old\npost-install.d install late\n"},
		{"json too", map[string]string{"a": `{"x": null, "y": {"phase": "post-install.d", "uninstall": true}}`}, nil,
			"install.d install x\npost-install.d uninstall y\n"},
		{"a removal another element's install keeps", map[string]string{"a": "shared:\n", "b": "shared:\n  uninstall: true\n"}, nil,
			"install.d install shared\n"},
		{"an install cancels an earlier removal", map[string]string{"a": "shared:\n  uninstall: true\n", "b": "shared:\n"}, nil,
			"install.d install shared\n"},
		{"in another phase they are apart", map[string]string{"a": "shared:\n  phase: pre-install.d\n", "b": "shared:\n  uninstall: true\n"}, nil,
			"pre-install.d install shared\ninstall.d uninstall shared\n"},
		{"arch", map[string]string{"a": "both:\nx86:\n  arch: amd64\narm:\n  arch: arm64, ppc64el\nnotx86:\n  not-arch: amd64\nnotarm:\n  not-arch: arm64,ppc64el\n"}, []string{"ARCH=amd64"},
			"install.d install both x86 notarm\n"},
		{"arch ppc64el", map[string]string{"a": "both:\nx86:\n  arch: amd64\narm:\n  arch: arm64, ppc64el\nnotx86:\n  not-arch: amd64\nnotarm:\n  not-arch: arm64,ppc64el\n"}, []string{"ARCH=ppc64el"},
			"install.d install both arm notx86\n"},
		{"a list of parameter sets", map[string]string{"a": "k:\n  - arch: arm64\n  - arch: amd64\n    phase: pre-install.d\n"}, []string{"ARCH=amd64"},
			"pre-install.d install k\n"},
		{"a package named twice once", map[string]string{"a": "p:\n", "b": "p:\n"}, nil, "install.d install p\n"},
		{"nothing", map[string]string{"a": ""}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := t.TempDir()
			var names []string
			for e, y := range c.elements {
				file := "package-installs.yaml"
				if strings.HasPrefix(y, "{") {
					file = "package-installs.json"
				}
				write(t, filepath.Join(path, e, file), y, 0o644)
				names = append(names, e)
			}
			slices.Sort(names)
			out, errs, code := dryRun(t, path, append([]string{"DISTRO_NAME=debian"}, c.env...), names...)
			if code != 0 || out != c.want {
				t.Errorf("exit %d, got\n%s\nwant\n%s\n%s", code, out, c.want, errs)
			}
		})
	}
}

// What apply-elements does not do, it refuses in one line naming the
// file, and the build does not start.
func TestResolutionErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, content string
		env                 []string
		want                string
	}{
		{"when", "package-installs.yaml", "p:\n  when: DIB_X = 1\n", nil, "package-installs.yaml: p: when is not supported here"},
		{"installtype", "package-installs.yaml", "p:\n  installtype: package\n", nil, "p: installtype is not supported here"},
		{"arch and not-arch", "package-installs.yaml", "p:\n  arch: amd64\n  not-arch: arm64\n", nil, "p: arch and not-arch both given"},
		{"phase", "package-installs.yaml", "p:\n  phase: finalise.d\n", nil, "p: phase finalise.d is not one of"},
		{"uninstall false", "package-installs.yaml", "p:\n  uninstall: false\n", nil, "p: uninstall must be true"},
		{"yaml", "package-installs.yaml", "p: [\n", nil, "package-installs.yaml:"},
		{"not a mapping", "package-installs.yaml", "- p\n", nil, "package-installs.yaml: not a mapping of package names"},
		{"map json", "pkg-map", "{\"default\": {\"p\": [\"x\"]}}", []string{"DISTRO_NAME=debian"}, "pkg-map: p: want a string of package names"},
		{"deprecated list", "install.d/package-installs-e", "p\n", nil, "package-installs-* files are not supported here"},
		{"no distro", "pkg-map", "{}", []string{"DISTRO_NAME="}, "no DISTRO_NAME"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := t.TempDir()
			write(t, filepath.Join(path, "e", c.file), c.content, 0o644)
			env := c.env
			if strings.Contains(c.name, "distro") {
				// and no os-release ID either
				env = append(env, "DISTRO_NAME=")
			}
			root := filepath.Join(t.TempDir(), "root")
			os.MkdirAll(filepath.Join(root, "etc"), 0o755)
			cmd := exec.Command(applyElements, "-n", "-p", path, root, "e")
			cmd.Env = append([]string{"PATH=" + systemPath, "DISTRO_NAME=debian"}, env...)
			out, err := cmd.CombinedOutput()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("want exit 1, got %v:\n%s", err, out)
			}
			var errLines []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.HasPrefix(l, "apply-elements: ERROR: ") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !strings.Contains(errLines[0], c.want) || !strings.Contains(errLines[0], filepath.Join(path, "e")) {
				t.Errorf("want one error line naming the file and saying %q, got\n%s", c.want, out)
			}
		})
	}
}
