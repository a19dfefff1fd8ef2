package elements

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// standIns lays out the chroot's side as apply-elements does (the
// stand-ins in apply-elements/bin, the resolved maps in
// apply-elements/pkg-map) with the given maps, and returns its bin.
func standIns(t *testing.T, maps map[string]string) string {
	t.Helper()
	own := filepath.Join(t.TempDir(), "apply-elements")
	for _, s := range []string{"pkg-map", "install-packages"} {
		b, err := os.ReadFile(filepath.Join("../../scripts/apply-elements.d", s))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(own, "bin", s), string(b), 0o755)
	}
	for e, m := range maps {
		write(t, filepath.Join(own, "pkg-map", e), m, 0o644)
	}
	return filepath.Join(own, "bin")
}

// runIn runs argv with PATH bin and a directory of the few tools the
// stand-ins use: never the machine's own package managers.
func runIn(t *testing.T, bin string, env []string, argv ...string) (string, int) {
	t.Helper()
	tools := t.TempDir()
	for _, n := range []string{"bash", "sh", "dirname", "readlink", "ls", "cat"} {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(tools, n)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + bin + ":" + tools}, env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// pkg-map in the chroot answers as diskimage-builder's: mapped names,
// nothing for "", 1 for an unmapped name and 2 for an element without a
// map (--missing-ok: the names as they are).
func TestPkgMapStandIn(t *testing.T) {
	bin := standIns(t, map[string]string{"e": "tool\ttool-redhat\nlib\tlib-one lib-two\ngone\t\n"})
	env := []string{"DISTRO_NAME=centos", "DIB_RELEASE=9"}
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"--element", "e", "tool"}, "tool-redhat\n", 0},
		{[]string{"--element=e", "tool", "lib", "gone"}, "tool-redhat\nlib-one lib-two\n", 0},
		{[]string{"--element", "e", "--prefix", "-", "tool"}, "-tool-redhat\n", 0},
		{[]string{"--element", "e", "other"}, "pkg-map: e has no mapping for other (DISTRO_NAME=centos)\n", 1},
		{[]string{"--element", "e", "--missing-ok", "other", "tool"}, "other\ntool-redhat\n", 0},
		{[]string{"--element", "none", "x"}, "pkg-map: element none has no pkg-map\n", 2},
		{[]string{"--element", "none", "--missing-ok", "x"}, "x\n", 0},
		{[]string{"--element", "e", "--distro", "centos", "--release", "9", "tool"}, "tool-redhat\n", 0},
		{[]string{"--element", "e", "--distro", "fedora", "tool"}, "pkg-map: --distro fedora: the maps are resolved for centos (apply-elements)\n", 1},
		{[]string{"tool"}, "pkg-map: give --element\n", 1},
	} {
		out, code := runIn(t, bin, env, append([]string{filepath.Join(bin, "pkg-map")}, c.args...)...)
		if out != c.out || code != c.code {
			t.Errorf("pkg-map %s: exit %d, %q; want exit %d, %q", strings.Join(c.args, " "), code, out, c.code, c.out)
		}
	}
}

// install-packages in the chroot drives the image's package manager:
// apt-get on the debian family, dnf (else yum) on the redhat one, else
// whichever the image has; -m maps through the element's pkg-map first,
// -e removes.
func TestInstallPackagesStandIn(t *testing.T) {
	maps := map[string]string{"e": "tool\ttool-redhat\nlib\tlib-one lib-two\ngone\t\n"}
	fake := func(dir string, names ...string) {
		for _, n := range names {
			write(t, filepath.Join(dir, n), "#!/bin/sh\necho \""+n+" $*\"\n", 0o755)
		}
	}
	for _, c := range []struct {
		name     string
		managers []string // fakes on PATH
		env      []string
		args     []string
		out      string
		code     int
	}{
		{"debian", []string{"apt-get", "dnf"}, []string{"DISTRO_NAME=debian"}, []string{"a", "b"},
			"apt-get -q -y --no-install-recommends -o Dpkg::Options::=--force-confold -o Dpkg::Options::=--force-confdef install a b\n", 0},
		{"centos dnf", []string{"apt-get", "dnf", "yum"}, []string{"DISTRO_NAME=centos"}, []string{"-m", "e", "tool", "lib", "gone"},
			"dnf -y install tool-redhat lib-one lib-two\n", 0},
		{"rhel yum", []string{"apt-get", "yum"}, []string{"DISTRO_NAME=rhel"}, []string{"-e", "x"}, "yum -y remove x\n", 0},
		{"rocky without dnf or yum", []string{"apt-get"}, []string{"DISTRO_NAME=rocky"}, []string{"x"},
			"install-packages: an rpm image (DISTRO_NAME=rocky) without dnf or yum: cannot install x\n", 1},
		{"no DISTRO_NAME: dnf", []string{"dnf"}, nil, []string{"x"}, "dnf -y install x\n", 0},
		{"unknown distro: apt-get", []string{"apt-get", "dnf"}, []string{"DISTRO_NAME=other"}, []string{"-e", "x"},
			"apt-get -q -y --no-install-recommends -o Dpkg::Options::=--force-confold -o Dpkg::Options::=--force-confdef remove x\n", 0},
		{"all mapped away", []string{"dnf"}, []string{"DISTRO_NAME=centos"}, []string{"-m", "e", "gone"}, "install-packages: nothing to install\n", 0},
		{"a name the map lacks", []string{"dnf"}, []string{"DISTRO_NAME=centos"}, []string{"-m", "e", "other"},
			"pkg-map: e has no mapping for other (DISTRO_NAME=centos)\ninstall-packages: pkg-map failed for e: other\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := standIns(t, maps)
			fakes := t.TempDir()
			fake(fakes, c.managers...)
			// apt-get's lists are there: no update.
			out, code := runIn(t, bin+":"+fakes, c.env, append([]string{filepath.Join(bin, "install-packages")}, c.args...)...)
			out = strings.ReplaceAll(out, "ls: cannot access '/var/lib/apt/lists/*_Packages': No such file or directory\n", "")
			out = strings.ReplaceAll(out, "apt-get -q update\n", "")
			if out != c.out || code != c.code {
				t.Errorf("install-packages %s: exit %d, %q; want exit %d, %q", strings.Join(c.args, " "), code, out, c.code, c.out)
			}
		})
	}
}
