package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// rpmElements are the elements of the RPM node's image: the agent's
// daemon and its script hook (with what they depend on). The tripleo-agent
// element they need is test/e2e/testdata/rpm-elements' stand-in: the
// package is installed before, with rpm.
var rpmElements = []string{"os-collect-config", "heat-config-script"}

// rpmImage is what buildRPMImage made, once per test binary.
type rpmImage struct {
	root           string // the image's root filesystem
	rpm, next      string // the package, and a newer build of the same version (release 2)
	version        string // the package's (Debian form: packaging/version.sh), and the newer one's
	nextVersion    string
	rpmSize        int64
	base           string   // the base package
	provides       []string // what it provides
	enabledByRPM   string   // systemctl is-enabled right after rpm -i
	enabledByImage string   // and after the elements
	// how long each part took; image: the whole image (the copy of the
	// rootfs, the base package, rpm -i, the elements)
	rpmBuild, nextBuild, baseBuild, install, elements, image time.Duration
}

var (
	rpmImageOnce sync.Once
	rpmImg       rpmImage
	rpmImageErr  error
)

func buildRPMImage(t *testing.T) rpmImage {
	t.Helper()
	if err := buildRPMImageOnce(); err != nil {
		t.Fatal(err)
	}
	return rpmImg
}

// buildRPMImageOnce builds the RPM image once per test run (see
// prebuild).
func buildRPMImageOnce() error {
	rpmImageOnce.Do(func() { rpmImg, rpmImageErr = buildRPM() })
	return rpmImageErr
}

// buildRPM builds two packages (make rpm: the checkout's version, and the
// same upstream version at release 2), a base package for the Debian root
// (image_rpm_base_test.go), and from a copy of lab.sh's cached debootstrap
// rootfs the image: an rpm of its own (testdata/rpm-elements/rpm-node),
// an rpm database initialised, the base package and then the agent's
// installed with the build host's rpm --root (their scriptlets run in a
// chroot of the image), then the elements applied as for the golden
// image, which enable the unit.
func buildRPM() (b rpmImage, err error) {
	ctx := context.Background()
	dir := filepath.Join(lab.Dir, "images-rpm")
	if err := os.RemoveAll(dir); err != nil {
		return b, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return b, err
	}
	run := func(d *time.Duration, timeout time.Duration, c Cmd) (string, error) {
		t0 := time.Now()
		res, err := Run(ctx, timeout, c)
		*d += time.Since(t0)
		if err != nil {
			return "", fmt.Errorf("%s: %w\n%s%s", strings.Join(c.Argv, " "), err, tail(res.Stdout, 3000), tail(res.Stderr, 3000))
		}
		return strings.TrimSpace(string(res.Stdout)), nil
	}
	lastLine := func(s string) string { return s[strings.LastIndex(s, "\n")+1:] }

	var none time.Duration
	version, err := run(&none, time.Minute, Cmd{Dir: repoRoot(), Argv: []string{"bash", "packaging/version.sh"}})
	if err != nil {
		return b, err
	}
	// The same upstream version at release 2: what rpm -U takes as newer.
	upstream := version
	if i := strings.LastIndex(version, "-"); i > 0 {
		upstream = version[:i]
	}
	b.version, b.nextVersion = version, upstream+"-2"
	makeRPM := func(d *time.Duration, v, out string) (string, error) {
		s, err := run(d, 15*time.Minute, Cmd{Dir: repoRoot(), Argv: []string{"make", "-s", "rpm", "RPM_OUT=" + out, "VERSION=" + v}})
		return lastLine(s), err
	}
	if b.rpm, err = makeRPM(&b.rpmBuild, b.version, filepath.Join(dir, "release-1")); err != nil {
		return b, err
	}
	fi, err := os.Stat(b.rpm)
	if err != nil {
		return b, fmt.Errorf("make rpm printed %q: %w", b.rpm, err)
	}
	b.rpmSize = fi.Size()
	if b.next, err = makeRPM(&b.nextBuild, b.nextVersion, filepath.Join(dir, "release-2")); err != nil {
		return b, err
	}

	base, err := run(&none, 30*time.Minute, Cmd{Argv: []string{labSh(), "rootfs"}, Env: labEnv()})
	if err != nil {
		return b, err
	}
	base = lastLine(base)
	t0 := time.Now()
	defer func() { b.image = time.Since(t0) }()
	b.base, b.provides, err = buildBase(ctx, dir, base, b.rpm, b.next)
	b.baseBuild = time.Since(t0)
	if err != nil {
		return b, err
	}

	b.root = filepath.Join(dir, "root")
	if _, err := run(&b.install, 10*time.Minute, Cmd{Argv: []string{"cp", "-a", "--reflink=auto", base, b.root}}); err != nil {
		return b, err
	}
	// The elements' phases are run by the package's own dib-run-parts (a
	// link to the static multi-call binary), taken out of it: the first
	// pass runs before it is installed.
	if _, err := run(&none, time.Minute, Cmd{Dir: dir, Argv: []string{"sh", "-c",
		`rpm2cpio "$0" | cpio --quiet -id ./usr/bin/dib-run-parts ./usr/bin/tripleo-agent`, b.rpm}}); err != nil {
		return b, err
	}
	apply := func(elements ...string) error {
		argv := append([]string{filepath.Join(repoRoot(), "scripts", "apply-elements"),
			"-r", filepath.Join(dir, "usr", "bin", "dib-run-parts"), b.root}, elements...)
		path := strings.Join([]string{filepath.Join(repoRoot(), "test", "e2e", "testdata", "rpm-elements"),
			filepath.Join(repoRoot(), "elements")}, ":")
		_, err := run(&b.elements, 20*time.Minute, Cmd{Argv: argv, Env: append(os.Environ(), "ELEMENTS_PATH="+path)})
		return err
	}
	// A Fedora image has rpm before its packages are installed with it.
	if err := apply("rpm-node"); err != nil {
		return b, err
	}

	// rpm --root chroots into the image for the scriptlets (which query
	// the database with the image's rpm); /proc and /dev there as in an
	// image build, in a mount namespace of their own.
	rpmRoot := func(args ...string) (string, error) {
		argv := append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount -t proc proc "$0/proc" && mount --bind /dev "$0/dev" && exec "$@"`, b.root,
			"rpm", "--root", b.root, "--dbpath", "/var/lib/rpm"}, args...)
		return run(&b.install, 5*time.Minute, Cmd{Argv: argv, Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "HOME=/root"}})
	}
	for _, args := range [][]string{{"--initdb"}, {"-i", b.base}, {"-i", b.rpm}} {
		if _, err := rpmRoot(args...); err != nil {
			return b, err
		}
	}
	isEnabled := func() string {
		res, _ := Run(ctx, time.Minute, Cmd{Argv: []string{"systemctl", "--root", b.root, "is-enabled", "os-collect-config.service"}})
		return strings.TrimSpace(string(res.Stdout))
	}
	b.enabledByRPM = isEnabled()
	if err := apply(rpmElements...); err != nil {
		return b, err
	}
	b.enabledByImage = isEnabled()
	return b, nil
}
