package deb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/doccmd"
	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

// The way back (issue 31): an image built with the Python agent's
// elements holds, outside any package, files at paths the package
// installs. The package diverts them (preinst), so that they come back
// when it is removed (postrm), and the node converges again with
// Debian's Python packages.

// pythonImage is the tree of those files (testdata/python-image/README.md).
const pythonImage = "testdata/python-image"

// pythonUnit is os-collect-config.service as tripleo-image-elements'
// os-collect-config element writes it into /lib/systemd/system (then
// enables it), with ExecStart where Debian's python3-os-collect-config
// puts the program.
const pythonUnit = `[Unit]
Description=Collect metadata and run hook commands.
After=cloud-config.service
Before=crond.service

[Service]
ExecStart=/usr/bin/os-collect-config
Restart=on-failure

[Install]
WantedBy=multi-user.target
`

const wantsLink = "etc/systemd/system/multi-user.target.wants/os-collect-config.service"

// Debian 12's Python agent, which the node goes back to.
var pythonPackages = []string{"python3-os-collect-config", "python3-os-refresh-config",
	"python3-os-apply-config", "python3-dib-utils"}

// divertTo is where the image's file at path (relative to /) waits while
// the package is installed: dpkg-divert's default name, path.distrib,
// which dib-run-parts (its names are [0-9A-Za-z_-]+), 55-heat-config (a
// hook is named by its group) and systemd (a unit name ends in its type)
// never take; but os-apply-config renders every file under its template
// root whatever its name, so a template waits beside that root.
func divertTo(path string) string {
	const templates = "usr/libexec/os-apply-config/templates/"
	if rest, ok := strings.CutPrefix(path, templates); ok {
		return "usr/libexec/os-apply-config/templates.distrib/" + rest
	}
	return path + ".distrib"
}

// diverted is every path of the package an image may hold outside any
// package: the os-refresh-config scripts, the hooks, the templates and
// the unit. Not /usr/bin's programs: those the Python packages own
// (Replaces), or no element puts there.
func diverted(t *testing.T, deb string) []string {
	t.Helper()
	var l []string
	for path, e := range contents(t, deb) {
		if e.mode[0] == 'd' {
			continue
		}
		if strings.HasPrefix(path, "usr/libexec/") || path == unitPath {
			l = append(l, path)
		}
	}
	sort.Strings(l)
	return l
}

// fileState is what a byte-for-byte comparison of a file looks at.
type fileState = pkgtest.FileState

func stateOf(t *testing.T, path string) (fileState, bool) {
	t.Helper()
	return pkgtest.StateOf(t, path)
}

// placePythonImage copies testdata/python-image over root and writes
// and enables the element's unit, as the elements did; it returns every
// file it placed (relative to /) and its state.
func placePythonImage(t *testing.T, root string) map[string]fileState {
	t.Helper()
	placed := map[string]fileState{}
	err := filepath.WalkDir(pythonImage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(pythonImage, "README.md") {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(pythonImage, p)
		write(t, filepath.Join(root, rel), string(b), fi.Mode().Perm())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, unitPath), pythonUnit, 0o644)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, wantsLink)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/"+unitPath, filepath.Join(root, wantsLink)); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(pythonImage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(pythonImage, "README.md") {
			return err
		}
		rel, _ := filepath.Rel(pythonImage, p)
		placed[rel], _ = stateOf(t, filepath.Join(root, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	placed[unitPath], _ = stateOf(t, filepath.Join(root, unitPath))
	placed[wantsLink], _ = stateOf(t, filepath.Join(root, wantsLink))
	return placed
}

// sameFiles reports each of want's files whose state in root differs.
func sameFiles(t *testing.T, root, when string, want map[string]fileState, at func(string) string) {
	t.Helper()
	for path, w := range want {
		where := at(path)
		got, ok := stateOf(t, filepath.Join(root, where))
		switch {
		case !ok:
			t.Errorf("%s: the image's /%s is not at /%s", when, path, where)
		case got != w:
			t.Errorf("%s: /%s (the image's /%s) is %v %q, was %v %q", when, where, path, got.Mode, got.Content, w.Mode, w.Content)
		}
	}
}

func same(path string) string { return path }

// diversions lists dpkg-divert's diversions by tripleo-agent (relative
// paths, to the name each file is diverted to).
func diversions(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(mustChroot(t, root, "dpkg-divert", "--list")))
	for sc.Scan() {
		var from, to, by string
		if n, _ := fmt.Sscanf(sc.Text(), "diversion of %s to %s by %s", &from, &to, &by); n == 3 && by == "tripleo-agent" {
			m[strings.TrimPrefix(from, "/")] = strings.TrimPrefix(to, "/")
		}
	}
	return m
}

// noneLeft: nothing of the diversions remains, neither a diversion nor
// a file or directory under a diverted name.
func noneLeft(t *testing.T, root, when string, paths []string) {
	t.Helper()
	if d := diversions(t, root); len(d) != 0 {
		t.Errorf("%s: diversions by tripleo-agent are left: %v", when, d)
	}
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, divertTo(p))); err == nil {
			t.Errorf("%s: /%s is left", when, divertTo(p))
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "usr/libexec/os-apply-config/templates.distrib")); err == nil {
		t.Errorf("%s: /usr/libexec/os-apply-config/templates.distrib is left", when)
	}
}

// newImageRoot is a copy of the cached Debian 12 rootfs (an image being
// built: no systemd), with a policy-rc.d that refuses every action.
func newImageRoot(t *testing.T) string {
	t.Helper()
	return imageRootFrom(t, imageRootfs(t))
}

// imageRootfs is the cached Debian 12 rootfs, built under REQUIRE_DEB=1
// when missing; the test skips where it cannot use it.
func imageRootfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skip(t, "chroot needs root")
	}
	needTool(t, "chroot", "coreutils")
	src := rootfs()
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil && os.Getenv("REQUIRE_DEB") == "1" {
		// CI on a fresh machine: build the cached rootfs the way
		// make systemd-test does (debootstrap, once).
		run(t, 20*time.Minute, "../systemd/lab.sh", "rootfs")
	}
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil {
		skip(t, "no cached Debian rootfs at %s (test/systemd/lab.sh rootfs builds it): %v", src, err)
	}
	return src
}

// imageRootFrom is newImageRoot's copy of src.
func imageRootFrom(t *testing.T, src string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	run(t, 2*time.Minute, "cp", "-a", "--reflink=auto", src+"/.", root+"/")
	if _, err := os.Stat(filepath.Join(root, "run/systemd/system")); err == nil {
		t.Fatal("the rootfs copy has /run/systemd/system: the scripts would think systemd runs")
	}
	write(t, filepath.Join(root, "usr/sbin/policy-rc.d"), "#!/bin/sh\nexit 101\n", 0o755)
	return root
}

// apt runs apt-get in root (the network: Debian's mirror in the rootfs'
// sources).
func apt(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := chrootFor(t, 15*time.Minute, root, append([]string{"apt-get", "-q", "-y", "--no-install-recommends"}, args...)...)
	if err != nil {
		t.Fatalf("apt-get %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// wayBackRound is one pass on the image-style node, whichever agent it
// runs: local data whose deployments are script deployments converge-1
// to converge-<round> (each writes /srv/converged-<n>), and
// os-collect-config --force. It returns the rendered
// /var/run/heat-config/heat-config, which it removes first, so that this
// pass renders it.
func wayBackRound(t *testing.T, root, who string, round int) string {
	t.Helper()
	var deployments []any
	for n := 1; n <= round; n++ {
		deployments = append(deployments, map[string]any{
			"id": fmt.Sprintf("converge-%d", n), "name": "converge", "group": "script",
			"inputs": []any{}, "outputs": []any{}, "options": map[string]any{},
			"config": fmt.Sprintf("#!/bin/sh\necho round %d > /srv/converged-%d\n", n, n)})
	}
	data, _ := json.Marshal(map[string]any{"deployments": deployments})
	write(t, filepath.Join(root, "srv/node-data/node.json"), string(data), 0o600)
	// (/var/run is a link to /run, which is absolute: the host's from here.)
	rendered := filepath.Join(root, "run/heat-config/heat-config")
	os.Remove(rendered)
	out, err := chrootProc(t, root, "os-collect-config", "--force")
	if err != nil {
		t.Fatalf("%s, round %d: os-collect-config --force: %v\n%s", who, round, err, out)
	}
	b, err := os.ReadFile(rendered)
	if err != nil {
		t.Fatalf("%s, round %d: nothing rendered: %v\n%s", who, round, err, out)
	}
	want := fmt.Sprintf("round %d\n", round)
	if got, err := os.ReadFile(filepath.Join(root, "srv", fmt.Sprintf("converged-%d", round))); err != nil || string(got) != want {
		t.Errorf("%s, round %d: /srv/converged-%d is %q (%v), want %q: nothing deployed\n%s", who, round, round, got, err, want, out)
	}
	return string(b)
}

// The README's install command on Debian and Ubuntu, which TestWayBack
// runs as it reads (the package it built for the glob).
const readmeInstall = "sudo apt-get install ./dist/tripleo-agent_*_amd64.deb"

// A node of an image built with the Python agent's elements, running
// Debian's Python packages, swaps them for the package (apt-get install
// ./x.deb), which is upgraded, converges, and is purged; the image's
// files come back byte for byte, Debian's packages are installed again,
// and the node renders what the package rendered and deploys again.
func TestWayBack(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	v := field(t, deb, "Version")
	next := pkg(t, v+"+1")
	paths := diverted(t, deb)
	root := newPythonNode(t)
	image := placePythonImage(t, root)
	write(t, filepath.Join(root, "etc/os-collect-config.conf"), handConf, 0o600)
	wayBackRound(t, root, "Python, before", 1)

	install, err := doccmd.Args(readmeInstall, "apt-get", copyInto(t, deb, root, "/tmp/"+filepath.Base(deb)))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s:\n%s", readmeInstall, apt(t, root, install...))
	for _, p := range pythonPackages {
		if s := status(t, root, p); strings.HasPrefix(s, "ii") {
			t.Errorf("%s still installed: %s", p, s)
		}
	}
	want := map[string]string{}
	for _, p := range paths {
		want[p] = divertTo(p)
	}
	if got := diversions(t, root); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the install, diversions by tripleo-agent:\n%v\nwant\n%v", got, want)
	}
	// The image's files at the package's paths wait under their diverted
	// names; the rest stay where they are.
	divertedImage, kept := map[string]fileState{}, map[string]fileState{}
	for p, s := range image {
		if _, ok := want[p]; ok {
			divertedImage[p] = s
		} else {
			kept[p] = s
		}
	}
	if len(divertedImage) != 7 {
		t.Errorf("%d of the image's files are at the package's paths, want 7 (testdata/python-image and the unit): %v", len(divertedImage), divertedImage)
	}
	sameFiles(t, root, "after the install", divertedImage, divertTo)
	sameFiles(t, root, "after the install", kept, same)
	if out := mustChroot(t, root, "dpkg", "--verify", "tripleo-agent"); out != "" {
		t.Errorf("dpkg --verify tripleo-agent after the install:\n%s", out)
	}

	// An upgrade keeps the diversions and the image's files.
	t.Logf("upgrade:\n%s", apt(t, root, "install", copyInto(t, next, root, "/tmp/tripleo-agent-next.deb")))
	if got := diversions(t, root); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the upgrade, diversions by tripleo-agent:\n%v\nwant\n%v", got, want)
	}
	sameFiles(t, root, "after the upgrade", divertedImage, divertTo)
	ours := wayBackRound(t, root, "the package", 2)

	t.Logf("apt-get purge tripleo-agent:\n%s", apt(t, root, "purge", "tripleo-agent"))
	if s := status(t, root, "tripleo-agent"); s != "absent" && !strings.HasPrefix(s, "un") {
		t.Errorf("tripleo-agent: %q after the purge", s)
	}
	// The purge disables the unit as any package's purge does (the
	// image's enablement link was the package's unit's after the
	// install); everything else is the image's, byte for byte.
	delete(kept, wantsLink)
	sameFiles(t, root, "after the purge", divertedImage, same)
	sameFiles(t, root, "after the purge", kept, same)
	noneLeft(t, root, "after the purge", paths)

	// The way back, as packaging/README.md says.
	apt(t, root, append([]string{"install"}, pythonPackages...)...)
	mustChroot(t, root, "systemctl", "enable", "os-collect-config.service")
	delete(image, wantsLink)
	sameFiles(t, root, "after the way back", image, same)
	// (systemctl may link the unit through /usr/lib, the same directory.)
	if l, err := os.Readlink(filepath.Join(root, wantsLink)); err != nil {
		t.Errorf("after the way back the unit is not enabled: %v", err)
	} else if b, err := os.ReadFile(filepath.Join(root, l)); err != nil || string(b) != pythonUnit {
		t.Errorf("after the way back, the enabled unit %s is %q (%v), want the image's", l, b, err)
	}
	python := wayBackRound(t, root, "Python, after the way back", 2)
	if python != ours {
		t.Errorf("Python renders /var/run/heat-config/heat-config as\n%s\nthe package rendered\n%s", python, ours)
	}
	wayBackRound(t, root, "Python, after the way back", 3)
}

// repackUndiverted makes deb into a build that diverts nothing: the
// maintainer scripts of testdata/undiverted, no preinst, version version.
func repackUndiverted(t *testing.T, deb, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "undiverted")
	run(t, time.Minute, "dpkg-deb", "-R", deb, dir)
	os.Remove(filepath.Join(dir, "DEBIAN/preinst"))
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		b, err := os.ReadFile(filepath.Join("testdata/undiverted", s))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "DEBIAN", s), string(b), 0o755)
	}
	control := filepath.Join(dir, "DEBIAN/control")
	b, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Version: ") {
			l = "Version: " + version
		}
		lines = append(lines, l)
	}
	write(t, control, strings.Join(lines, "\n"), 0o644)
	out := filepath.Join(filepath.Dir(dir), "tripleo-agent_undiverted.deb")
	run(t, time.Minute, "dpkg-deb", "--root-owner-group", "--build", dir, out)
	return out
}

// A node that installed a build which diverted nothing lost the image's
// files at the package's paths then (dpkg overwrote them); the upgrade
// to a diverting build adds the diversions and loses no file: each path
// keeps the package's file (none is moved aside as if it were the
// image's), and the purge then leaves no file of the package behind
// under either name.
func TestUpgradeFromUndivertedBuild(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	v := field(t, deb, "Version")
	next := pkg(t, v+"+1")
	old := repackUndiverted(t, deb, v)
	paths := diverted(t, deb)
	root := newImageRoot(t)
	image := placePythonImage(t, root)

	mustChroot(t, root, "dpkg", "-i", copyInto(t, old, root, "/tmp/old.deb"))
	if d := diversions(t, root); len(d) != 0 {
		t.Fatalf("the undiverted build diverts: %v", d)
	}
	out := mustChroot(t, root, "dpkg", "-i", copyInto(t, next, root, "/tmp/next.deb"))
	t.Logf("dpkg -i (upgrade):\n%s", out)
	if strings.Contains(out, "warning") {
		t.Errorf("the upgrade warns:\n%s", out)
	}
	if s := status(t, root, "tripleo-agent"); s != "ii "+v+"+1" {
		t.Errorf("tripleo-agent: %q after the upgrade", s)
	}
	want := map[string]string{}
	for _, p := range paths {
		want[p] = divertTo(p)
	}
	if got := diversions(t, root); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the upgrade, diversions by tripleo-agent:\n%v\nwant\n%v", got, want)
	}
	if out := mustChroot(t, root, "dpkg", "--verify", "tripleo-agent"); out != "" {
		t.Errorf("dpkg --verify tripleo-agent after the upgrade:\n%s", out)
	}
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, divertTo(p))); err == nil {
			t.Errorf("after the upgrade /%s exists: the old build's file was moved aside", divertTo(p))
		}
	}
	// The image's files elsewhere were never touched.
	for p, s := range image {
		if _, ok := want[p]; ok {
			continue
		}
		if got, ok := stateOf(t, filepath.Join(root, p)); !ok || got != s {
			t.Errorf("after the upgrade /%s is %v %q, was %v %q", p, got.Mode, got.Content, s.Mode, s.Content)
		}
	}

	mustChroot(t, root, "dpkg", "--purge", "tripleo-agent")
	for _, p := range paths {
		if got, ok := stateOf(t, filepath.Join(root, p)); ok && got.Content == "../../../bin/tripleo-agent" {
			t.Errorf("after the purge /%s is the package's link, put back as if it were the image's", p)
		}
	}
	noneLeft(t, root, "after the purge", paths)
}

// An install that fails after the preinst diverted (here another
// package owns one of the package's files, so dpkg stops the unpack)
// gives the image's files back.
func TestAbortedInstall(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	paths := diverted(t, deb)
	root := newImageRoot(t)
	image := placePythonImage(t, root)

	dir := filepath.Join(t.TempDir(), "blocker")
	write(t, filepath.Join(dir, "DEBIAN/control"), "Package: blocker\nVersion: 1.0\nArchitecture: all\n"+
		"Maintainer: test <test@example.org>\nDescription: owns /usr/bin/tripleo-agent-status\n", 0o644)
	write(t, filepath.Join(dir, "usr/bin/tripleo-agent-status"), "#!/bin/sh\n", 0o755)
	blocker := filepath.Join(filepath.Dir(dir), "blocker.deb")
	run(t, time.Minute, "dpkg-deb", "--root-owner-group", "-Znone", "--build", dir, blocker)
	mustChroot(t, root, "dpkg", "-i", copyInto(t, blocker, root, "/tmp/blocker.deb"))

	out, err := chroot(t, root, "dpkg", "-i", copyInto(t, deb, root, "/tmp/a.deb"))
	t.Logf("dpkg -i:\n%s", out)
	if err == nil || !strings.Contains(out, "/usr/bin/tripleo-agent-status") {
		t.Fatalf("the install did not fail on blocker's file (%v)", err)
	}
	sameFiles(t, root, "after the failed install", image, same)
	noneLeft(t, root, "after the failed install", paths)

	// A diverted name already taken stops the install in the preinst,
	// and what it had moved comes back.
	mustChroot(t, root, "dpkg", "--purge", "blocker", "tripleo-agent")
	const taken = "usr/libexec/os-refresh-config/post-configure.d/99-refresh-completed.distrib"
	write(t, filepath.Join(root, taken), "someone's\n", 0o644)
	out, err = chroot(t, root, "dpkg", "-i", "/tmp/a.deb")
	t.Logf("dpkg -i:\n%s", out)
	if err == nil || !strings.Contains(out, "/"+taken) {
		t.Fatalf("the install did not fail on /%s (%v)", taken, err)
	}
	sameFiles(t, root, "after the failed install", image, same)
	if b, err := os.ReadFile(filepath.Join(root, taken)); err != nil || string(b) != "someone's\n" {
		t.Errorf("/%s is %q (%v)", taken, b, err)
	}
	if d := diversions(t, root); len(d) != 0 {
		t.Errorf("after the failed install, diversions by tripleo-agent are left: %v", d)
	}
}
