package elements

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

// skip skips the test, or fails it under REQUIRE_DEB=1 (.ci/run).
func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	pkgtest.Skip(t, "REQUIRE_DEB", format, args...)
}

func needTool(t *testing.T, name, why string) {
	t.Helper()
	pkgtest.NeedTool(t, "REQUIRE_DEB", name, why)
}

func run(t *testing.T, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	out, err := runErr(timeout, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// runErr runs a command with env added to the test's environment.
func runErr(timeout time.Duration, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// chroot runs a command in root with a clean environment.
func chroot(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C", "DEBIAN_FRONTEND=noninteractive", "HOME=/root"}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustChroot(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := chroot(t, root, args...)
	if err != nil {
		t.Fatalf("chroot %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// newRoot is a copy of the Debian 12 rootfs test/systemd/lab.sh caches:
// an image being built, no systemd running.
func newRoot(t *testing.T) string {
	t.Helper()
	return copyRoot(t, debianRootfs(t))
}

// debianRootfs is the Debian 12 rootfs test/systemd/lab.sh caches (`lab.sh
// rootfs`; built here under REQUIRE_DEB=1 when missing); the test skips
// where it cannot use it.
func debianRootfs(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("copies the Debian rootfs and builds packages")
	}
	if os.Geteuid() != 0 {
		skip(t, "chroot needs root")
	}
	needTool(t, "chroot", "coreutils")
	dir := os.Getenv("LAB_CACHE_DIR")
	if dir == "" {
		dir = "/var/cache/tripleo-agent-test"
	}
	src := filepath.Join(dir, "rootfs-bookworm-v1")
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil && os.Getenv("REQUIRE_DEB") == "1" {
		run(t, 20*time.Minute, nil, "../systemd/lab.sh", "rootfs")
	}
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil {
		skip(t, "no cached Debian rootfs at %s (test/systemd/lab.sh rootfs builds it): %v", src, err)
	}
	return src
}

// copyRoot copies a root filesystem into the test's scratch directory.
func copyRoot(t *testing.T, src string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(src, "etc")); err != nil {
		t.Fatalf("%s is not a root filesystem: %v", src, err)
	}
	root := filepath.Join(t.TempDir(), "root")
	run(t, 5*time.Minute, nil, "cp", "-a", "--reflink=auto", src+"/.", root+"/")
	return root
}

var (
	buildOnce sync.Map // what -> *builtOnce
	scratch   string   // the test binary's scratch directory for packages
)

type builtOnce struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "elements-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scratch = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// once builds something once per test binary: the last line build prints
// is its path.
func once(t *testing.T, what string, build func() (string, error)) string {
	t.Helper()
	v, _ := buildOnce.LoadOrStore(what, &builtOnce{})
	b := v.(*builtOnce)
	b.once.Do(func() {
		b.err = fmt.Errorf("building %s stopped short (an earlier test's skip or failure)", what)
		b.path, b.err = build()
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// makePackage runs make deb or make rpm into the scratch directory and
// returns the package's path.
func makePackage(t *testing.T, kind string) string {
	t.Helper()
	return once(t, kind, func() (string, error) {
		out := filepath.Join(scratch, kind)
		v := strings.ToUpper(kind) + "_OUT=" + out
		res, err := runErr(10*time.Minute, nil, "make", "-s", "-C", "../..", kind, v)
		if err != nil {
			return "", fmt.Errorf("make %s %s: %v\n%s", kind, v, err, res)
		}
		lines := strings.Split(strings.TrimSpace(res), "\n")
		path := lines[len(lines)-1]
		if _, err := os.Stat(path); err != nil || filepath.Dir(path) != out {
			return "", fmt.Errorf("make %s printed %q, not a package in %s: %v", kind, path, out, err)
		}
		return path, nil
	})
}

// dibRunParts is this project's dib-run-parts (the multi-call binary by
// that name), which apply-elements copies into the chroot.
func dibRunParts(t *testing.T) string {
	t.Helper()
	return once(t, "dib-run-parts", func() (string, error) {
		path := filepath.Join(scratch, "bin", "dib-run-parts")
		res, err := runErr(5*time.Minute, []string{"CGO_ENABLED=0"}, "go", "build", "-C", "../..", "-trimpath", "-o", path, "./cmd/tripleo-agent")
		if err != nil {
			return "", fmt.Errorf("go build: %v\n%s", err, res)
		}
		return path, nil
	})
}

// apply runs scripts/apply-elements on root with the project's elements
// and extra (a directory of test elements) on ELEMENTS_PATH.
func apply(t *testing.T, root, extra string, env []string, elements ...string) (string, error) {
	t.Helper()
	env = append(env, "ELEMENTS_PATH=../../elements:"+extra)
	return runErr(15*time.Minute, env, applyElements, append([]string{"-r", dibRunParts(t), root}, elements...)...)
}

// testElement is an element that installs agent-test-tool through
// package-installs.yaml, agent-test-other through its own install.d
// script (install-packages -m), and removes agent-test-gone; its pkg-map
// gives each name a package of the image's kind (-deb or -rpm).
func testElement(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "pkgtest/README.md"), "A test element.\n", 0o644)
	write(t, filepath.Join(dir, "pkgtest/package-installs.yaml"), "tool:\ngone:\n  uninstall: true\n", 0o644)
	write(t, filepath.Join(dir, "pkgtest/pkg-map"), `{
  "family": {
    "debian": {"tool": "agent-test-tool-deb", "other": "agent-test-other-deb", "gone": "agent-test-gone-deb"},
    "redhat": {"tool": "agent-test-tool-rpm", "other": "agent-test-other-rpm", "gone": "agent-test-gone-rpm"}
  },
  "default": {"tool": "no-such-package", "other": "no-such-package", "gone": "no-such-package"}
}
`, 0o644)
	write(t, filepath.Join(dir, "pkgtest/install.d/50-pkgtest"), "#!/bin/bash\nset -euo pipefail\ninstall-packages -m pkgtest other\n", 0o755)
	return dir
}

// fakeDeb builds an empty Debian package.
func fakeDeb(t *testing.T, dir, name string) string {
	t.Helper()
	root := filepath.Join(dir, "build", name)
	write(t, filepath.Join(root, "DEBIAN/control"), "Package: "+name+"\nVersion: 1.0\nArchitecture: all\n"+
		"Maintainer: test <test@example.org>\nDescription: a test package\n", 0o644)
	deb := filepath.Join(dir, name+".deb")
	run(t, time.Minute, nil, "dpkg-deb", "--root-owner-group", "-Znone", "--build", root, deb)
	return deb
}

// localAptRepo makes root's only apt source a local repository of
// packages (trusted, under /srv/repo): the image's "repositories", with no
// network.
func localAptRepo(t *testing.T, root string, names ...string) {
	t.Helper()
	needTool(t, "dpkg-scanpackages", "apt-get install dpkg-dev")
	repo := filepath.Join(root, "srv/repo")
	for _, n := range names {
		fakeDeb(t, repo, n)
	}
	os.RemoveAll(filepath.Join(repo, "build"))
	run(t, time.Minute, nil, "sh", "-c", "cd \"$0\" && dpkg-scanpackages -m . /dev/null >Packages", repo)
	os.Remove(filepath.Join(root, "etc/apt/sources.list"))
	os.RemoveAll(filepath.Join(root, "etc/apt/sources.list.d"))
	write(t, filepath.Join(root, "etc/apt/sources.list.d/local.list"), "deb [trusted=yes] file:/srv/repo ./\n", 0o644)
}

func dpkgStatus(t *testing.T, root, pkg string) string {
	out, err := chroot(t, root, "dpkg-query", "-W", "-f=${db:Status-Abbrev}", pkg)
	if err != nil {
		return "absent"
	}
	return strings.TrimSpace(out)
}

// afterBuild: what every build leaves, and does not.
func afterBuild(t *testing.T, root string) {
	t.Helper()
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants/os-collect-config.service")
	if _, err := os.Lstat(wants); err != nil {
		t.Errorf("os-collect-config.service is not enabled: %v", err)
	}
	if out := mustChroot(t, root, "os-collect-config", "--version"); !strings.Contains(out, ".") {
		t.Errorf("os-collect-config --version: %q", out)
	}
	for _, gone := range []string{"tmp/in_target.d", "usr/sbin/policy-rc.d", "usr/local/bin/install-packages", "usr/local/bin/pkg-map"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); err == nil {
			t.Errorf("/%s is left in the image", gone)
		}
	}
}

// On a Debian image the element installs the .deb with apt-get, and the
// elements' packages come from the image's repositories under their
// Debian names: package-installs.yaml's first in install.d, the script's
// own (install-packages -m) after, the removal last.
func TestElementsOnDebian(t *testing.T) {
	t.Parallel()
	root := newRoot(t)
	deb := makePackage(t, "deb")
	localAptRepo(t, root, "agent-test-tool-deb", "agent-test-other-deb", "agent-test-gone-deb",
		"agent-test-tool-rpm", "agent-test-other-rpm")
	mustChroot(t, root, "sh", "-c", "apt-get -q update && apt-get -q -y install agent-test-gone-deb && rm -rf /var/lib/apt/lists/*")
	out, err := apply(t, root, testElement(t), []string{"DIB_TRIPLEO_AGENT_DEB=" + deb}, "os-collect-config", "pkgtest")
	t.Logf("apply-elements:\n%s", out)
	if err != nil {
		t.Fatalf("apply-elements: %v", err)
	}
	for pkg, want := range map[string]string{"tripleo-agent": "ii", "agent-test-tool-deb": "ii", "agent-test-other-deb": "ii",
		"agent-test-gone-deb": "absent", "agent-test-tool-rpm": "absent", "agent-test-other-rpm": "absent"} {
		if got := dpkgStatus(t, root, pkg); !strings.HasPrefix(got, want) && !(want == "absent" && strings.HasPrefix(got, "rc")) {
			t.Errorf("%s: %q, want %q", pkg, got, want)
		}
	}
	afterBuild(t, root)
	for _, step := range []string{"install.d: install agent-test-tool-deb", "install.d: uninstall agent-test-gone-deb"} {
		if !strings.Contains(out, step) {
			t.Errorf("apply-elements did not say %q", step)
		}
	}

	// An .rpm for a Debian image is a mistake said in one line.
	out, err = apply(t, root, testElement(t), []string{"DIB_TRIPLEO_AGENT_RPM=" + deb}, "tripleo-agent")
	if want := "tripleo-agent: DIB_TRIPLEO_AGENT_RPM names a .rpm, but this is a deb image (DISTRO_NAME=debian): set DIB_TRIPLEO_AGENT_DEB"; err == nil || !strings.Contains(out, want) {
		t.Errorf("an .rpm on a Debian image: %v, want %q in\n%s", err, want, out)
	}
}
