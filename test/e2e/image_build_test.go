package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The elements of the golden image: the agent with an element for every
// hook group, the overcloud node's configure steps (TripleO's sysctl,
// os-net-config, network-gateway, hiera, hosts), and first the test's
// recording fakes of the tools that cannot run in its machines
// (testdata/elements/e2e-node-tools), which the hooks' elements would
// otherwise install or miss.
var goldenElements = []string{"e2e-node-tools", "os-collect-config",
	"heat-config-script", "heat-config-puppet", "heat-config-ansible", "heat-config-hiera",
	"heat-config-json-file", "heat-config-apply-config", "heat-config-cfn-init",
	"heat-config-docker-cmd", "heat-config-docker-compose", "heat-config-kubelet",
	"heat-config-salt", "heat-config-chef",
	"sysctl", "os-net-config", "network-gateway", "hiera", "hosts"}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// built is what buildImage made, once per test binary.
type built struct {
	golden, python string // root filesystems
	deb            string // the package
	debSize        int64
	// how long each part took; baseCached: the debootstrap rootfs was
	// there already
	base, debBuild, goldenApply, pythonApply time.Duration
	baseCached                               bool
}

var (
	imageOnce sync.Once
	images    built
	imageErr  error
)

// buildImages builds the package (make deb), the Debian 12 rootfs
// (debootstrap, cached by lab.sh between runs), and from copies of it two
// images: the golden one (goldenElements applied with
// scripts/apply-elements, the package installed by the tripleo-agent
// element) and, for the upgrade, one as the Python agent left a node
// (testdata/elements/python-agent).
func buildImages(t *testing.T) built {
	t.Helper()
	if err := buildImagesOnce(); err != nil {
		t.Fatal(err)
	}
	return images
}

// buildImagesOnce builds the images once per test run, for the first
// test that needs them or ahead of it (prebuild).
func buildImagesOnce() error {
	imageOnce.Do(func() {
		in, err := installOnly()
		if err != nil {
			imageErr = err
			return
		}
		images, imageErr = build(in)
	})
	return imageErr
}

// prebuild builds the golden, Python and RPM images while the first
// tests run, which count the lab's requests alone and mostly wait on
// it: the images need only the checkout and the rootfs cache, not the
// lab. It runs when the whole suite does (no -run), and wait returns
// once it is done, so that nothing of it outlives the tests.
func prebuild() (wait func()) {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); buildImagesOnce() }()
	go func() { defer wg.Done(); buildRPMImageOnce() }()
	return wg.Wait
}

func build(in Installed) (b built, err error) {
	ctx := context.Background()
	dir := filepath.Join(lab.Dir, "images")
	if err := os.RemoveAll(dir); err != nil {
		return b, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return b, err
	}
	step := func(d *time.Duration, timeout time.Duration, c Cmd) (string, error) {
		t0 := time.Now()
		res, err := Run(ctx, timeout, c)
		*d = time.Since(t0)
		if err != nil {
			return "", fmt.Errorf("%s: %w\n%s%s", strings.Join(c.Argv, " "), err, tail(res.Stdout, 3000), tail(res.Stderr, 3000))
		}
		return strings.TrimSpace(string(res.Stdout)), nil
	}

	out, err := step(&b.debBuild, 10*time.Minute, Cmd{Dir: repoRoot(), Argv: []string{"make", "-s", "deb", "DEB_OUT=" + dir}})
	if err != nil {
		return b, err
	}
	b.deb = out[strings.LastIndex(out, "\n")+1:]
	fi, err := os.Stat(b.deb)
	if err != nil {
		return b, fmt.Errorf("make deb printed %q: %w", b.deb, err)
	}
	b.debSize = fi.Size()

	cache := os.Getenv("LAB_CACHE_DIR")
	if cache == "" {
		cache = "/var/cache/tripleo-agent-test"
	}
	if ents, _ := filepath.Glob(filepath.Join(cache, "rootfs-*")); len(ents) > 0 {
		b.baseCached = true
	}
	base, err := step(&b.base, 30*time.Minute, Cmd{Argv: []string{labSh(), "rootfs"}, Env: labEnv()})
	if err != nil {
		return b, err
	}
	base = base[strings.LastIndex(base, "\n")+1:]

	apply := func(d *time.Duration, name string, env []string, elements ...string) (string, error) {
		root := filepath.Join(dir, name)
		t0 := time.Now()
		if _, err := step(d, 10*time.Minute, Cmd{Argv: []string{"cp", "-a", "--reflink=auto", base, root}}); err != nil {
			return "", err
		}
		argv := append([]string{filepath.Join(repoRoot(), "scripts", "apply-elements"),
			"-r", filepath.Join(in.Dir, "usr", "bin", "dib-run-parts"), root}, elements...)
		if _, err := step(d, 20*time.Minute, Cmd{Argv: argv, Env: append(os.Environ(), env...)}); err != nil {
			return "", err
		}
		*d = time.Since(t0)
		return root, nil
	}
	elements := filepath.Join(repoRoot(), "test", "e2e", "testdata", "elements")
	// The two images are copies of their own: built side by side (the
	// Python one waits mostly on Debian's mirror).
	var goldenErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.golden, goldenErr = apply(&b.goldenApply, "golden", []string{"DIB_TRIPLEO_AGENT_DEB=" + b.deb,
			"ELEMENTS_PATH=" + filepath.Join(repoRoot(), "elements") + ":" + elements}, goldenElements...)
	}()
	b.python, err = apply(&b.pythonApply, "python", []string{"ELEMENTS_PATH=" + elements,
		"DIB_HEAT_CONFIG_BINARY=" + filepath.Join(in.Dir, "usr", "bin", "tripleo-agent"), "DIB_TRIPLEO_REPO=" + repoRoot()},
		"python-agent")
	wg.Wait()
	return b, errors.Join(goldenErr, err)
}
