// Package rpm checks what `make rpm` builds: the name, Version and
// Release, the architectures, the Provides and Obsoletes of every RDO
// package it replaces, the files (those under /usr/bin and /usr/libexec
// are the .deb's), the scriptlets, rpmlint's verdict with the
// package's rpmlintrc and byte-reproducible builds; root_test.go runs
// rpm transactions in a copy of the Debian 12 rootfs that
// test/systemd/lab.sh caches, made an rpm node by a base package
// (internal/testkit/rpmbase): install, upgrade, erase, an image's own
// files kept and given back, the swap from RDO's packages, and dnf
// installing from a createrepo_c repository.
//
// Skipped under -short, and when rpmbuild (or, for the parts that need
// them, rpmlint, dpkg-deb, createrepo_c, dnf, root or the cached rootfs)
// is missing; REQUIRE_RPM=1 turns every such skip into a failure.
package rpm

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

var work string // the test run's scratch directory (RPM_OUT and the rest)

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "rpm-test")
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

// skip skips the test, or fails it under REQUIRE_RPM=1 (.ci/run).
func skip(t *testing.T, format string, args ...any) {
	t.Helper()
	pkgtest.Skip(t, "REQUIRE_RPM", format, args...)
}

func needTool(t *testing.T, name, why string) {
	t.Helper()
	pkgtest.NeedTool(t, "REQUIRE_RPM", name, why)
}

func run(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	out, err := runErr(timeout, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func runErr(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// built maps a make invocation to a *builtPkg: the tests run in
// parallel, and the first to ask builds while the others wait.
var built sync.Map

type builtPkg struct {
	once sync.Once
	path string
	err  error
}

// makePkg runs make TARGET with vars (NAME=value) once per target and
// set of vars, into a directory of its own, and returns the path make
// printed.
func makePkg(t *testing.T, target string, vars ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the package with make " + target)
	}
	needTool(t, "rpmbuild", "apt-get install rpm")
	v, _ := built.LoadOrStore(target+"\x00"+strings.Join(vars, "\x00"), &builtPkg{})
	b := v.(*builtPkg)
	b.once.Do(func() {
		out, err := os.MkdirTemp(work, "out")
		if err != nil {
			b.err = err
			return
		}
		outVar := map[string]string{"rpm": "RPM_OUT=", "deb": "DEB_OUT="}[target] + out
		args := append([]string{"-s", "-C", "../..", target, outVar}, vars...)
		res, err := runMake(args)
		if err != nil {
			b.err = fmt.Errorf("make %s: %v\n%s", strings.Join(args, " "), err, res)
		} else {
			lines := strings.Split(strings.TrimSpace(res), "\n")
			b.path = lines[len(lines)-1]
			if _, err := os.Stat(b.path); err != nil || filepath.Dir(b.path) != out {
				b.err = fmt.Errorf("make %s printed %q, not a package in %s: %v", target, b.path, out, err)
			}
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// runMake returns make's standard output (the package's path), or its
// error with both outputs.
func runMake(args []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out) + stderr.String(), err
	}
	return string(out), nil
}

// pkg is make rpm's package for VERSION=version (empty: the default).
func pkg(t *testing.T, version string) string {
	t.Helper()
	if version == "" {
		return makePkg(t, "rpm")
	}
	return makePkg(t, "rpm", "VERSION="+version)
}

// query runs rpm -qp --qf format on a package.
func query(t *testing.T, rpm, format string) string {
	t.Helper()
	return run(t, time.Minute, "rpm", "-qp", "--qf", format, rpm)
}

// lines runs rpm -qp with args and returns its output's lines, sorted.
func lines(t *testing.T, rpm string, args ...string) []string {
	t.Helper()
	out := run(t, time.Minute, "rpm", append(append([]string{"-qp"}, args...), rpm)...)
	var l []string
	for _, s := range strings.Split(out, "\n") {
		// Debian's rpm warns on stderr that it is not dpkg.
		if s = strings.TrimSpace(s); s != "" && !strings.HasPrefix(s, "rpm: ") {
			l = append(l, s)
		}
	}
	sort.Strings(l)
	return l
}

// debVersion is version.sh's VERSION for this checkout.
func debVersion(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(run(t, time.Minute, "bash", "../../packaging/version.sh"))
}

// The package is named as the issue says, its Version and Release are
// version.sh's two parts, and its header carries no trace of the build
// machine.
func TestHeader(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	v := debVersion(t)
	up, rel, _ := strings.Cut(v, "-")
	want := fmt.Sprintf("tripleo-agent-%s-%s.x86_64.rpm", up, rel)
	if filepath.Base(rpm) != want {
		t.Errorf("make rpm wrote %s, want %s (VERSION %s)", filepath.Base(rpm), want, v)
	}
	info := query(t, rpm, "%{NAME}|%{VERSION}|%{RELEASE}|%{ARCH}|%{LICENSE}|%{BUILDHOST}|%{BUILDTIME}|%{PACKAGER}|%{URL}")
	t.Log(info)
	f := strings.Split(info, "|")
	epoch := strings.TrimSpace(run(t, time.Minute, "bash", "-c", ". ../../packaging/version.sh && echo $SOURCE_DATE_EPOCH"))
	for i, w := range []string{"tripleo-agent", up, rel, "x86_64", "Apache-2.0", "reproducible", epoch,
		defaultMaintainer(t), "https://github.com/tripleo-go/agent"} {
		if f[i] != w {
			t.Errorf("header field %d: %q, want %q", i, f[i], w)
		}
	}
	// A version of its own: Version and Release from VERSION.
	other := pkg(t, "1.2.3~rc1-4")
	if got := query(t, other, "%{VERSION}-%{RELEASE}"); got != "1.2.3~rc1-4" {
		t.Errorf("VERSION=1.2.3~rc1-4: %s", got)
	}
	if got := query(t, other, "%{CHANGELOGNAME}"); got != defaultMaintainer(t)+" - 1.2.3~rc1-4" {
		t.Errorf("changelog signature %q", got)
	}
}

// defaultMaintainer is the Makefile's MAINTAINER default.
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

// GOARCH picks the architecture: the RPM names, rpmbuild --target, and
// a binary of that machine.
func TestArchitectures(t *testing.T) {
	t.Parallel()
	for goarch, arch := range map[string]string{"arm64": "aarch64", "ppc64le": "ppc64le"} {
		rpm := makePkg(t, "rpm", "GOARCH="+goarch)
		if got := query(t, rpm, "%{ARCH}"); got != arch || !strings.HasSuffix(rpm, "."+arch+".rpm") {
			t.Errorf("GOARCH=%s: %s, arch %s, want %s", goarch, rpm, got, arch)
		}
		if m := machine(t, rpm, "usr/bin/tripleo-agent"); m != map[string]elf.Machine{"arm64": elf.EM_AARCH64, "ppc64le": elf.EM_PPC64}[goarch] {
			t.Errorf("GOARCH=%s: the binary is for %v", goarch, m)
		}
	}
	out, err := runMake([]string{"-s", "-C", "../..", "rpm", "RPM_OUT=" + t.TempDir(), "GOARCH=mips"})
	if err == nil || !strings.Contains(out, "no RPM architecture for GOARCH=mips") {
		t.Errorf("GOARCH=mips: %v\n%s", err, out)
	}
}

// machine is the ELF machine of the package's file at path, read from
// the payload rpm2archive writes as a tar (no cpio needed).
func machine(t *testing.T, rpm, path string) elf.Machine {
	t.Helper()
	dir := t.TempDir()
	copy := filepath.Join(dir, "p.rpm")
	run(t, time.Minute, "cp", rpm, copy)
	run(t, time.Minute, "rpm2archive", "-n", copy)
	f, err := os.Open(copy + ".tar")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no %s in %s: %v", path, rpm, err)
		}
		if strings.TrimPrefix(h.Name, "./") != path {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		e, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return e.Machine
	}
}

// rdo is each RDO package the RPM replaces and the version it provides
// (packaging/README.md, "The RPM", says how each was chosen).
var rdo = map[string]string{
	"os-collect-config": "14.1.0.1", "os-refresh-config": "14.1.0.1", "os-apply-config": "14.1.0.1",
	"dib-utils":             "0.0.11.1",
	"openstack-heat-agents": "13.0.0.1", "python3-heat-agent": "13.0.0.1",
	"python3-heat-agent-puppet": "13.0.0.1", "python3-heat-agent-ansible": "13.0.0.1",
	"python3-heat-agent-hiera": "13.0.0.1", "python3-heat-agent-json-file": "13.0.0.1",
	"python3-heat-agent-apply-config": "13.0.0.1", "python3-heat-agent-docker-cmd": "13.0.0.1",
}

// rdoReleases is the last release of each RDO package's upstream: the
// Obsoletes must reach it (any Release), and not its next version.
var rdoReleases = map[string]string{
	"os-collect-config": "14.1.0", "os-refresh-config": "14.1.0", "os-apply-config": "14.1.0",
	"dib-utils": "0.0.11", "openstack-heat-agents": "13.0.0", "python3-heat-agent": "13.0.0",
}

func TestProvidesObsoletes(t *testing.T) {
	rpm := pkg(t, "")
	provides := lines(t, rpm, "--provides")
	obsoletes := lines(t, rpm, "--obsoletes")
	t.Logf("provides:\n%s\nobsoletes:\n%s", strings.Join(provides, "\n"), strings.Join(obsoletes, "\n"))
	for name, v := range rdo {
		if !contains(provides, name+" = "+v) {
			t.Errorf("no Provides: %s = %s", name, v)
		}
		if !contains(obsoletes, name+" < "+v) {
			t.Errorf("no Obsoletes: %s < %s", name, v)
		}
	}
	if len(obsoletes) != len(rdo) {
		t.Errorf("%d Obsoletes, want one per RDO package (%d)", len(obsoletes), len(rdo))
	}
	// The boundaries, with rpm's own comparison: every RDO build of the
	// last release (a dist tag too) is older than what is provided, the
	// next upstream version and RDO's snapshot of it are not.
	for name, last := range rdoReleases {
		v := rdo[name]
		for _, c := range []struct {
			evr   string
			older bool
		}{{last + "-1.el9", true}, {last + "-99.el9.1", true}, {last, true},
			{next(last) + "-0.20261129.abcdef.el9", false}, {next(last) + "-1.el9", false}} {
			if got := vercmp(t, c.evr, v) < 0; got != c.older {
				t.Errorf("%s %s < %s: %v, want %v", name, c.evr, v, got, c.older)
			}
		}
	}
}

// next is version's next patch version: 14.1.0 -> 14.1.1.
func next(version string) string {
	i := strings.LastIndex(version, ".")
	var n int
	fmt.Sscan(version[i+1:], &n)
	return fmt.Sprintf("%s.%d", version[:i], n+1)
}

// vercmp compares two EVRs as rpm does (rpmdev-vercmp's sign), with
// rpm's own Lua vercmp.
func vercmp(t *testing.T, a, b string) int {
	t.Helper()
	out := strings.TrimSpace(run(t, time.Minute, "rpm", "--eval", fmt.Sprintf("%%{lua: print(rpm.vercmp(%q, %q))}", a, b)))
	var n int
	if _, err := fmt.Sscan(out, &n); err != nil {
		t.Fatalf("rpm.vercmp(%s, %s): %q", a, b, out)
	}
	return n
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// entry is one file of a package: its type and mode, and a link's target.
type entry struct{ mode, link string }

// rpmFiles lists the package's files: path (relative) -> entry.
func rpmFiles(t *testing.T, rpm string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	out := run(t, time.Minute, "rpm", "-qp", "--qf", `[%{FILEMODES:perms} %{FILENAMES} %{FILELINKTOS}\n]`, rpm)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || strings.HasPrefix(l, "rpm: ") {
			continue
		}
		e := entry{mode: f[0]}
		if len(f) == 3 {
			e.link = f[2]
		}
		m[strings.TrimPrefix(f[1], "/")] = e
	}
	return m
}

// debFiles lists a .deb's files the same way.
func debFiles(t *testing.T, deb string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	sc := bufio.NewScanner(strings.NewReader(run(t, time.Minute, "dpkg-deb", "-c", deb)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		e := entry{mode: f[0]}
		if len(f) == 8 && f[6] == "->" {
			e.link = f[7]
		}
		m[strings.TrimSuffix(strings.TrimPrefix(f[5], "./"), "/")] = e
	}
	return m
}

// under keeps the entries (not directories) under the given prefixes.
func under(m map[string]entry, prefixes ...string) map[string]entry {
	o := map[string]entry{}
	for p, e := range m {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) && !strings.HasPrefix(e.mode, "d") {
				o[p] = e
			}
		}
	}
	return o
}

// The programs, links, hooks, scripts and templates are the .deb's
// (make deb in a directory of its own), the unit is under
// /usr/lib/systemd/system, and the docs, license, manual pages and
// completion are laid out as Fedora's guidelines say.
func TestContents(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	needTool(t, "dpkg-deb", "apt-get install dpkg")
	deb := makePkg(t, "deb")
	r, d := rpmFiles(t, rpm), debFiles(t, deb)
	rb, db := under(r, "usr/bin/", "usr/libexec/"), under(d, "usr/bin/", "usr/libexec/")
	if len(rb) < 30 {
		t.Errorf("only %d files under /usr/bin and /usr/libexec", len(rb))
	}
	for p, e := range db {
		if rb[p] != e {
			t.Errorf("/%s: the .deb has %+v, the rpm %+v", p, e, rb[p])
		}
	}
	for p, e := range rb {
		if _, ok := db[p]; !ok {
			t.Errorf("/%s (%+v) is in the rpm, not in the .deb", p, e)
		}
	}
	// The same manual pages and completion files, too.
	if a, b := keys(under(r, "usr/share/man/", "usr/share/bash-completion/")), keys(under(d, "usr/share/man/", "usr/share/bash-completion/")); strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("manual pages and completion: rpm %v, deb %v", a, b)
	}
	for p := range under(r, "usr/bin/") {
		if _, ok := r["usr/share/man/man1/"+filepath.Base(p)+".1.gz"]; !ok {
			t.Errorf("/%s has no manual page", p)
		}
	}
	for _, p := range []string{"usr/lib/systemd/system/os-collect-config.service",
		"usr/share/licenses/tripleo-agent/LICENSE", "usr/share/doc/tripleo-agent/README.md",
		"usr/share/doc/tripleo-agent/README.RPM", "usr/share/doc/tripleo-agent/docs/compat.md",
		"usr/share/doc/tripleo-agent/examples/os-collect-config.conf", "etc/os-collect-config.conf"} {
		if _, ok := r[p]; !ok {
			t.Errorf("no /%s", p)
		}
	}
	for p := range r {
		if strings.HasPrefix(p, "lib/") || strings.HasPrefix(p, "usr/lib/.build-id") || strings.HasPrefix(p, "var/") {
			t.Errorf("/%s: not a path of this package", p)
		}
	}
	// The operator's configuration: owned, shipped empty as %ghost
	// %config(noreplace), its content and mode left out of rpm -V.
	flags := query(t, rpm, `[%{FILENAMES} %{FILEFLAGS:fflags} %{FILEVERIFYFLAGS}\n]`)
	if !regexp.MustCompile(`(?m)^/etc/os-collect-config.conf cng `).MatchString(flags) {
		t.Errorf("/etc/os-collect-config.conf is not %%ghost %%config(noreplace):\n%s", flags)
	}
	if l := query(t, rpm, `[%{FILENAMES} %{FILELICENSE}\n]`); l == "" {
		t.Error("no license")
	}
	if flags := query(t, rpm, `[%{FILENAMES} %{FILEFLAGS:fflags}\n]`); !strings.Contains(flags, "/usr/share/licenses/tripleo-agent/LICENSE l") {
		t.Errorf("LICENSE is not %%license:\n%s", flags)
	}
}

func keys(m map[string]entry) []string {
	var k []string
	for p := range m {
		k = append(k, p)
	}
	sort.Strings(k)
	return k
}

// rpmlint with the package's rpmlintrc reports no error, and every
// warning it leaves is one packaging/README.md names.
func TestRpmlint(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	needTool(t, "rpmlint", "apt-get install rpmlint")
	out, _ := runErr(2*time.Minute, "rpmlint", "-r", "../../packaging/rpm/tripleo-agent.rpmlintrc", rpm)
	t.Logf("rpmlint:\n%s", out)
	readme, err := os.ReadFile("../../packaging/README.md")
	if err != nil {
		t.Fatal(err)
	}
	sum := regexp.MustCompile(`(\d+) errors, (\d+) warnings`).FindStringSubmatch(out)
	if sum == nil {
		t.Fatalf("no summary line from rpmlint")
	}
	if sum[1] != "0" {
		t.Errorf("rpmlint: %s errors", sum[1])
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[1] == "W:" && !strings.Contains(string(readme), "`"+f[2]+"`") {
			t.Errorf("rpmlint warning %s is not explained in packaging/README.md", f[2])
		}
	}
	// Every filter is explained there too.
	rc, err := os.ReadFile("../../packaging/rpm/tripleo-agent.rpmlintrc")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^addFilter\("([a-z%-]+)`).FindAllStringSubmatch(string(rc), -1) {
		if !strings.Contains(string(readme), "`"+m[1]+"`") {
			t.Errorf("rpmlint filter %s is not explained in packaging/README.md", m[1])
		}
	}
}

// Two builds, into different directories (of make and of rpmbuild) and
// at different times, give the same bytes.
func TestReproducible(t *testing.T) {
	t.Parallel()
	a := pkg(t, "")
	time.Sleep(1100 * time.Millisecond) // another second on the clock
	out := filepath.Join(work, "again")
	res, err := runMake([]string{"-s", "-C", "../..", "rpm", "RPM_OUT=" + out, "TMPDIR=" + t.TempDir()})
	if err != nil {
		t.Fatalf("make rpm: %v\n%s", err, res)
	}
	b := filepath.Join(out, filepath.Base(a))
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(x) != string(y) {
		t.Errorf("%s and %s differ", a, b)
	}
}
