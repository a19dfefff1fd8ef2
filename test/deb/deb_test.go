// Package deb checks what `make deb` builds: the control fields, the
// contents (every program, script, hook and template of make install, the
// unit under /lib/systemd/system), the maintainer scripts and lintian's
// verdict; chroot_test.go installs, upgrades and purges it in a copy of
// the Debian 12 rootfs that test/systemd/lab.sh caches; divert_test.go
// swaps an image built with the Python agent's elements for it there and
// goes back (its files diverted and given back), and scripts_test.go
// runs the diversions' maintainer scripts against a fake dpkg.
//
// Skipped under -short, and when dpkg-deb (or, for the parts that need
// them, lintian, root or the cached rootfs) is missing; REQUIRE_DEB=1
// turns every such skip into a failure. TestWayBack's node runs Debian's
// Python packages, which apt-get installs from the network (or the .debs
// and lists fetched last, pkgtest.AptCache) into a copy of the rootfs
// kept beside it for a day (pythonnode_test.go); its way back installs
// them again with apt-get.
package deb

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
	"github.com/tripleo-go/agent/internal/version"
)

// What make install lays out (the Makefile's PROGRAMS, HOOKS, ORC_SCRIPTS).
var (
	programs = []string{"os-apply-config", "os-config-applier", "os-refresh-config", "dib-run-parts",
		"os-collect-config", "heat-config-notify", "heat-config-rebuild-deployed",
		"sysctl-set-value", "sysctl-write-value", "sysctl-append-value"}
	hooks      = []string{"script", "puppet", "ansible", "hiera", "json-file", "apply-config", "cfn-init", "docker-cmd", "docker-compose", "kubelet", "salt", "chef"}
	orcScripts = []string{"configure.d/20-os-apply-config",
		"configure.d/50-heat-config-docker-cmd", "configure.d/50-heat-config-docker-compose",
		"configure.d/50-heat-config-kubelet", "configure.d/55-heat-config",
		"post-configure.d/99-refresh-completed"}
	// Only templates of the agent's own files: none of an operator's
	// (the os-collect-config element's template is for images).
	templates = []string{"var/run/heat-config/heat-config", "var/run/heat-config/heat-config.oac"}
	// The Python packages whose files the package takes over.
	replaced = []string{"python3-os-collect-config", "python3-os-refresh-config",
		"python3-os-apply-config", "python3-dib-utils"}
	// and the upstream versions it provides: the releases it matches
	// (internal/version.Reference, and dib-utils' for dib-run-parts).
	providedVersions = map[string]string{"python3-os-collect-config": version.Reference,
		"python3-os-refresh-config": version.Reference, "python3-os-apply-config": version.Reference,
		"python3-dib-utils": "0.0.11"}
)

// defaultMaintainer is the Makefile's MAINTAINER default, the one place
// it is set.
func defaultMaintainer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MAINTAINER\s*\?=\s*(.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the Makefile sets no MAINTAINER ?= default")
	}
	return strings.TrimSpace(string(m[1]))
}

const unitPath = "lib/systemd/system/os-collect-config.service"

var work string // the test run's scratch directory (DEB_OUT and the rest)

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "deb-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		work = dir
		return m.Run()
	}()
	os.Exit(code)
}

// skip skips the test, or fails it under REQUIRE_DEB=1 (.ci/run).
func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	pkgtest.Skip(t, "REQUIRE_DEB", format, args...)
}

func needTool(t *testing.T, name, why string) {
	t.Helper()
	pkgtest.NeedTool(t, "REQUIRE_DEB", name, why)
}

func run(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// built maps make deb's variables to a *builtDeb: the tests run in
// parallel, and the first to ask builds while the others wait.
var built sync.Map

type builtDeb struct {
	once sync.Once
	path string
	err  error
}

// pkg builds the package once per version (empty: make deb's default)
// with make deb into the scratch directory and returns its path.
func pkg(t *testing.T, version string) string {
	t.Helper()
	if version == "" {
		return makeDeb(t)
	}
	return makeDeb(t, "VERSION="+version)
}

// makeDeb runs make deb with vars (NAME=value) once per set of vars.
func makeDeb(t *testing.T, vars ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the package with make deb")
	}
	needTool(t, "dpkg-deb", "apt-get install dpkg")
	v, _ := built.LoadOrStore(strings.Join(vars, "\x00"), &builtDeb{})
	b := v.(*builtDeb)
	b.once.Do(func() {
		out, err := os.MkdirTemp(work, "out")
		if err != nil {
			b.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		args := append([]string{"-s", "-C", "../..", "deb", "DEB_OUT=" + out}, vars...)
		res, err := exec.CommandContext(ctx, "make", args...).Output()
		if err != nil {
			b.err = fmt.Errorf("make %s: %v\n%s%s", strings.Join(args, " "), err, res, stderr(err))
		} else {
			lines := strings.Split(strings.TrimSpace(string(res)), "\n")
			b.path = lines[len(lines)-1]
			if _, err := os.Stat(b.path); err != nil || filepath.Dir(b.path) != out {
				b.err = fmt.Errorf("make deb printed %q, not a package in %s: %v", b.path, out, err)
			}
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func stderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// field reads one control field with dpkg-deb -f.
func field(t *testing.T, deb, name string) string {
	t.Helper()
	return strings.TrimSpace(run(t, time.Minute, "dpkg-deb", "-f", deb, name))
}

func list(s string) []string {
	var l []string
	for _, e := range strings.Split(s, ",") {
		l = append(l, strings.TrimSpace(e))
	}
	return l
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

var debVersion = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9.+~]*-[A-Za-z0-9.+~]+$`)

func TestControl(t *testing.T) {
	deb := pkg(t, "")
	info := run(t, time.Minute, "dpkg-deb", "-I", deb)
	t.Logf("%s\n%s", deb, info)
	for name, want := range map[string]string{
		"Package":      "tripleo-agent",
		"Architecture": "amd64",
		"Section":      "admin",
		"Priority":     "optional",
		"Depends":      "init-system-helpers (>= 1.54~)",
		"Suggests":     "puppet, ansible-core, heat-cfntools",
	} {
		if got := field(t, deb, name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	v := field(t, deb, "Version")
	if !debVersion.MatchString(v) {
		t.Errorf("Version %q is no Debian version with a revision", v)
	}
	if want := "tripleo-agent_" + v + "_amd64.deb"; filepath.Base(deb) != want {
		t.Errorf("file %s, want %s", filepath.Base(deb), want)
	}
	for _, name := range []string{"Conflicts", "Replaces"} {
		got := list(field(t, deb, name))
		for _, p := range replaced {
			if !contains(got, p) {
				t.Errorf("%s: %q lacks %s", name, got, p)
			}
		}
	}
	// Provides carries the upstream version matched (no Debian
	// revision), so that dependents on the Python packages' versions are
	// satisfied; chroot_test.go installs such dependents.
	got := list(field(t, deb, "Provides"))
	for p, v := range providedVersions {
		if want := p + " (= " + v + ")"; !contains(got, want) {
			t.Errorf("Provides: %q lacks %s", got, want)
		}
	}
	if m := field(t, deb, "Maintainer"); m != defaultMaintainer(t) {
		t.Errorf("Maintainer %q, want the Makefile's default %q", m, defaultMaintainer(t))
	}
	if field(t, deb, "Description") == "" {
		t.Error("no Description")
	}
	var kib int64
	if _, err := fmt.Sscan(field(t, deb, "Installed-Size"), &kib); err != nil || kib < 1024 {
		t.Errorf("Installed-Size %q: %v", field(t, deb, "Installed-Size"), err)
	}
}

// entry is one line of dpkg-deb -c.
type entry struct{ mode, owner, link string }

func contents(t *testing.T, deb string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	sc := bufio.NewScanner(strings.NewReader(run(t, time.Minute, "dpkg-deb", "-c", deb)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			t.Fatalf("dpkg-deb -c: %q", sc.Text())
		}
		e := entry{mode: f[0], owner: f[1]}
		if len(f) == 8 && f[6] == "->" {
			e.link = f[7]
		}
		m[strings.TrimSuffix(strings.TrimPrefix(f[5], "./"), "/")] = e
	}
	return m
}

func TestContents(t *testing.T) {
	deb := pkg(t, "")
	c := contents(t, deb)
	want := func(path, mode, link string) {
		t.Helper()
		e, ok := c[path]
		switch {
		case !ok:
			t.Errorf("no /%s", path)
		case e.mode != mode || e.link != link || e.owner != "root/root":
			t.Errorf("/%s: %s %s -> %q, want %s root/root -> %q", path, e.mode, e.owner, e.link, mode, link)
		}
	}
	want("usr/bin/tripleo-agent", "-rwxr-xr-x", "")
	for _, p := range programs {
		if target := pkgtest.BinTarget(p); target == "" {
			want("usr/bin/"+p, "-rwxr-xr-x", "")
		} else {
			want("usr/bin/"+p, "lrwxrwxrwx", target)
		}
	}
	for _, s := range orcScripts {
		want("usr/libexec/os-refresh-config/"+s, "lrwxrwxrwx", "../../../bin/tripleo-agent")
	}
	for _, h := range hooks {
		want("usr/libexec/heat-config/hooks/"+h, "lrwxrwxrwx", "../../../bin/tripleo-agent")
	}
	for _, f := range templates {
		want("usr/libexec/os-apply-config/templates/"+f, "-rw-r--r--", "")
	}
	want(unitPath, "-rw-r--r--", "")
	// The node's own steps (the Makefile's NODE_ELEMENTS) take effect
	// only in images built with their elements (elements/README.md): the
	// package has none of their os-refresh-config links.
	for _, e := range []string{"sysctl", "os-net-config", "network-gateway", "hiera", "hosts"} {
		scripts, _ := filepath.Glob(filepath.Join("../../elements", e, "os-refresh-config/*/*"))
		if len(scripts) == 0 {
			t.Errorf("elements/%s has no os-refresh-config script", e)
		}
		for _, s := range scripts {
			rel, _ := filepath.Rel(filepath.Join("../../elements", e), s)
			if _, ok := c["usr/libexec/"+rel]; ok {
				t.Errorf("/usr/libexec/%s: the %s element's step is in the package", rel, e)
			}
		}
	}
	want("usr/share/doc/tripleo-agent/copyright", "-rw-r--r--", "")
	want("usr/share/doc/tripleo-agent/changelog.Debian.gz", "-rw-r--r--", "")
	for path, e := range c {
		switch {
		case strings.HasPrefix(path, "etc"), strings.HasPrefix(path, "var"):
			t.Errorf("/%s: nothing under /etc or /var is shipped", path)
		case strings.HasPrefix(path, "usr/lib/systemd"):
			t.Errorf("/%s: units go under /lib/systemd", path)
		case strings.HasPrefix(e.link, "/"):
			t.Errorf("/%s -> %s: links are relative", path, e.link)
		case e.owner != "root/root":
			t.Errorf("/%s: owner %s", path, e.owner)
		}
	}

	// Every link resolves inside the package, and the unit runs /usr/bin's.
	root := t.TempDir()
	run(t, time.Minute, "dpkg-deb", "-x", deb, root)
	for path, e := range c {
		if e.link == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.Dir(path), e.link)); err != nil {
			t.Errorf("/%s -> %s: %v", path, e.link, err)
		}
	}
	unit, err := os.ReadFile(filepath.Join(root, unitPath))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^ExecStart=/usr/bin/os-collect-config$`).Match(unit) {
		t.Errorf("/%s has no ExecStart=/usr/bin/os-collect-config:\n%s", unitPath, unit)
	}
	if bytes.Contains(unit, []byte("/usr/local")) {
		t.Errorf("/%s names /usr/local:\n%s", unitPath, unit)
	}
	if !regexp.MustCompile(`(?m)^Documentation=man:os-collect-config\(1\)`).Match(unit) {
		t.Errorf("/%s has no Documentation= naming os-collect-config(1):\n%s", unitPath, unit)
	}

	// The documentation, as dh_installdocs and dh_installexamples lay it
	// out and dh_compress compresses it (files over 4 KiB), and nothing
	// else in the package's doc directory.
	const doc = "usr/share/doc/tripleo-agent/"
	docs := map[string]string{"README.md": "../../README.md", "README.Debian": "../../packaging/README.md",
		"examples/os-collect-config.conf": "../../examples/os-collect-config.conf"}
	mds, _ := filepath.Glob("../../docs/*.md")
	if len(mds) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, md := range mds {
		docs["docs/"+filepath.Base(md)] = md
	}
	expected := map[string]bool{doc + "copyright": true, doc + "changelog.Debian.gz": true,
		doc + "docs": true, doc + "examples": true}
	for name, src := range docs {
		source, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		path := doc + name
		if len(source) > 4096 {
			path += ".gz"
		}
		expected[path] = true
		want(path, "-rw-r--r--", "")
		var shipped []byte
		if strings.HasSuffix(path, ".gz") {
			shipped = []byte(run(t, time.Minute, "zcat", filepath.Join(root, path)))
		} else {
			shipped, _ = os.ReadFile(filepath.Join(root, path))
		}
		if !bytes.Equal(shipped, source) {
			t.Errorf("/%s is not %s", path, src)
		}
	}
	for path := range c {
		if strings.HasPrefix(path, doc) && !expected[path] {
			t.Errorf("/%s: unexpected in the documentation", path)
		}
	}
}

func TestMaintainerScripts(t *testing.T) {
	deb := pkg(t, "")
	dir := t.TempDir()
	run(t, time.Minute, "dpkg-deb", "-e", deb, dir)
	for script, wants := range map[string][]string{
		"preinst":  {"dpkg-divert", "--rename", "--add"},
		"postinst": {"deb-systemd-helper", "enable", "deb-systemd-invoke", "restart", "daemon-reload", "dpkg-divert", "--add"},
		"prerm":    {"deb-systemd-invoke", "stop"},
		"postrm":   {"deb-systemd-helper", "purge", "dpkg-divert", "--rename", "--remove"},
	} {
		path := filepath.Join(dir, script)
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", script, err)
			continue
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v", script, fi.Mode())
		}
		run(t, time.Minute, "sh", "-n", path)
		b, _ := os.ReadFile(path)
		for _, w := range wants {
			if !bytes.Contains(b, []byte(w)) {
				t.Errorf("%s does not say %q", script, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "conffiles")); err == nil {
		t.Error("the package has conffiles; it ships nothing under /etc")
	}
}

func TestLintian(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	needTool(t, "lintian", "apt-get install lintian")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// lintian's exit status also counts warnings; errors are E: lines.
	out, _ := exec.CommandContext(ctx, "lintian", "--show-overrides", deb).CombinedOutput()
	t.Logf("lintian:\n%s", out)
	// No error and no warning but initial-upload-closes-no-bugs (the
	// package is not uploaded to Debian, no ITP to close), and
	// no-manual-page while the package has no manual at all.
	manuals := false
	for path := range contents(t, deb) {
		manuals = manuals || strings.HasPrefix(path, "usr/share/man/man1/")
	}
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "E:") && !strings.HasPrefix(l, "W:") {
			continue
		}
		if f := strings.Fields(l); len(f) >= 3 && (f[2] == "initial-upload-closes-no-bugs" || f[2] == "no-manual-page" && !manuals) {
			continue
		}
		t.Errorf("lintian: %s", l)
	}
	if ctx.Err() != nil {
		t.Fatalf("lintian: %v", ctx.Err())
	}
}

// make deb MAINTAINER="..." sets the Maintainer field and the changelog's
// signature; a value that is not "Name <address>" stops the build with
// one line naming the variable.
func TestMaintainer(t *testing.T) {
	t.Parallel()
	const m = "Jane O'Brien <jane@example.org>"
	deb := makeDeb(t, "MAINTAINER="+m)
	if got := field(t, deb, "Maintainer"); got != m {
		t.Errorf("Maintainer %q, want %q", got, m)
	}
	root := t.TempDir()
	run(t, time.Minute, "dpkg-deb", "-x", deb, root)
	changelog := run(t, time.Minute, "zcat", filepath.Join(root, "usr/share/doc/tripleo-agent/changelog.Debian.gz"))
	if !strings.Contains(changelog, "\n -- "+m+"  ") {
		t.Errorf("the changelog is not signed by %s:\n%s", m, changelog)
	}
	for _, bad := range []string{"nobody", "Jane <jane@example.org>, Joe <joe@example.org>", "a|b <x@example.org>"} {
		out, err := exec.Command("make", "-s", "-C", "../..", "deb", "DEB_OUT="+t.TempDir(), "MAINTAINER="+bad).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || !strings.HasPrefix(lines[0], "build-deb: MAINTAINER is not") {
			t.Errorf("MAINTAINER=%q: %v\n%s", bad, err, out)
		}
	}
}
