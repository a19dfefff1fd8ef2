package rpm

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/doccmd"
	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
	"github.com/tripleo-go/agent/internal/testkit/rpmbase"
)

// The transactions run with the host's rpm --root on a copy of the
// Debian 12 rootfs test/systemd/lab.sh caches (an image being built: no
// running systemd), which rpm chroots into for the scriptlets. The copy
// becomes an rpm node: an rpm database, the base package that provides
// what the root has (rpmbase.Base: /bin/sh, systemd, coreutils..., and
// Fedora's default preset, so systemctl preset leaves a unit disabled as
// on Fedora), the rpm command inside for the scriptlets' queries, and a
// systemctl that logs each call before running the real one.

const (
	unit      = "os-collect-config.service"
	unitPath  = "usr/lib/systemd/system/os-collect-config.service"
	wantsLink = "etc/systemd/system/multi-user.target.wants/os-collect-config.service"
	confPath  = "etc/os-collect-config.conf"
	sysctlLog = "tmp/systemctl.log"
)

// rootfs is the Debian 12 tree test/systemd/lab.sh builds and caches.
func rootfs() string {
	dir := os.Getenv("LAB_CACHE_DIR")
	if dir == "" {
		dir = "/var/cache/tripleo-agent-test"
	}
	return filepath.Join(dir, "rootfs-bookworm-v1")
}

var (
	baseOnce sync.Once
	basePath string
	baseErr  error
)

// base builds the base package once per run.
func base(t *testing.T) string {
	t.Helper()
	baseOnce.Do(func() {
		dir := filepath.Join(work, "base")
		if baseErr = os.MkdirAll(dir, 0o755); baseErr == nil {
			basePath, baseErr = rpmbase.Build(context.Background(), dir, rpmbase.Base())
		}
	})
	if baseErr != nil {
		t.Fatal(baseErr)
	}
	return basePath
}

// newRoot is a copy of the cached rootfs made an rpm node (see above);
// withBase false leaves the base package out (dnf brings it).
func newRoot(t *testing.T, withBase bool) string {
	t.Helper()
	if testing.Short() {
		t.Skip("rpm transactions in a copy of the Debian rootfs")
	}
	if os.Geteuid() != 0 {
		skip(t, "rpm --root chroots into the root for the scriptlets: needs root")
	}
	needTool(t, "rpmbuild", "apt-get install rpm")
	needTool(t, "chroot", "coreutils")
	src := rootfs()
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil && os.Getenv("REQUIRE_RPM") == "1" {
		// CI on a fresh machine: build the cached rootfs the way
		// make systemd-test does (debootstrap, once).
		run(t, 20*time.Minute, "../systemd/lab.sh", "rootfs")
	}
	if _, err := os.Stat(filepath.Join(src, "var/lib/dpkg/status")); err != nil {
		skip(t, "no cached Debian rootfs at %s (test/systemd/lab.sh rootfs builds it): %v", src, err)
	}
	root := filepath.Join(t.TempDir(), "root")
	run(t, 2*time.Minute, "cp", "-a", "--reflink=auto", src+"/.", root+"/")
	if _, err := os.Stat(filepath.Join(root, "run/systemd/system")); err == nil {
		t.Fatal("the rootfs copy has /run/systemd/system: the scriptlets would think systemd runs")
	}
	real := filepath.Join(root, "usr/bin/systemctl.real")
	if err := os.Rename(filepath.Join(root, "usr/bin/systemctl"), real); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "usr/bin/systemctl"),
		"#!/bin/sh\necho \"$*\" >>/"+sysctlLog+"\nexec /usr/bin/systemctl.real \"$@\"\n", 0o755)
	if err := rpmbase.CopyRPM(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	rpmIn(t, root, "--initdb")
	if withBase {
		rpmIn(t, root, "-i", base(t))
	}
	return root
}

// rpmIn runs the host's rpm on root and returns its output (the
// scriptlets' lines too).
func rpmIn(t *testing.T, root string, args ...string) string {
	t.Helper()
	out, err := rpmErr(root, args...)
	if err != nil {
		t.Fatalf("rpm --root %s %s: %v\n%s", root, strings.Join(args, " "), err, out)
	}
	return out
}

func rpmErr(root string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "rpm", append([]string{"--root", root}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "HOME=/root"}
	out, err := cmd.CombinedOutput()
	return dropNotice(string(out)), err
}

// dropNotice drops Debian's rpm's notice that it is not dpkg.
func dropNotice(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "rpm: RPM should not be used directly") && !strings.HasPrefix(l, "rpm: However assuming") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// chroot runs a command in root with a clean environment.
func chroot(t *testing.T, root string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "HOME=/root"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chroot %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// enabled is systemctl is-enabled's word for the unit in root.
func enabled(t *testing.T, root string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "chroot", root, "/usr/bin/systemctl.real", "is-enabled", unit).Output()
	return strings.TrimSpace(string(out))
}

// systemctlCalls returns the systemctl calls logged since the last
// call, and starts a new log.
func systemctlCalls(t *testing.T, root string) []string {
	t.Helper()
	p := filepath.Join(root, sysctlLog)
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(p)
	var l []string
	for _, s := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if s != "" {
			l = append(l, s)
		}
	}
	return l
}

// called reports whether one of calls contains every word of want.
func called(calls []string, want string) bool {
	for _, c := range calls {
		if c == want {
			return true
		}
	}
	return false
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// nodeState writes what a deployed node holds outside any package:
// heat-config's deployed state, os-collect-config's cache and an
// operator's configuration; it returns them, relative to /.
func nodeState(t *testing.T, root string) map[string]string {
	t.Helper()
	s := map[string]string{
		"var/lib/heat-config/deployed/x.json":            `{"id": "x"}`,
		"var/lib/heat-config/deployed/x.notify.json":     `{"deploy_status_code": 0}`,
		"var/lib/os-collect-config/heat_local.json":      `{"deployments": []}`,
		"var/lib/os-collect-config/os_config_files.json": `["/var/lib/os-collect-config/heat_local.json"]`,
		confPath: "# written by hand\n[DEFAULT]\ncommand = os-refresh-config\ncollectors = local\n",
	}
	for p, c := range s {
		write(t, filepath.Join(root, p), c, 0o600)
	}
	return s
}

// sameState reports each of s's files whose content changed, and any
// .rpmsave or .rpmnew beside the configuration.
func sameState(t *testing.T, root, when string, s map[string]string) {
	t.Helper()
	for p, c := range s {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil || string(b) != c {
			t.Errorf("%s: /%s is %q (%v), want %q", when, p, b, err, c)
		}
	}
	for _, suffix := range []string{".rpmsave", ".rpmnew", ".rpmorig"} {
		if exists(filepath.Join(root, confPath+suffix)) {
			t.Errorf("%s: /%s%s exists", when, confPath, suffix)
		}
	}
}

// Install, upgrade and erase on a node (its operator's configuration and
// deployed state in place): the first install applies the preset (which
// leaves the unit disabled, as on Fedora) and enables nothing; the image
// enables it; an upgrade only reloads and try-restarts, keeping the
// enablement; the erase disables and stops the unit and keeps the
// node's state and configuration.
func TestInstallUpgradeErase(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	up, _, _ := strings.Cut(debVersion(t), "-")
	later := pkg(t, up+"-2")
	root := newRoot(t, true)
	state := nodeState(t, root)
	systemctlCalls(t, root)

	out := rpmIn(t, root, "-i", rpm)
	t.Logf("rpm -i:\n%s", out)
	calls := systemctlCalls(t, root)
	t.Logf("systemctl: %q", calls)
	if !called(calls, "--no-reload preset "+unit) {
		t.Errorf("the first install applied no preset: %q", calls)
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "enable") || strings.Contains(c, " enable ") || strings.Contains(c, "start") {
			t.Errorf("the first install ran systemctl %s", c)
		}
	}
	if e := enabled(t, root); e != "disabled" {
		t.Errorf("after the install the unit is %q, want disabled (Fedora's preset)", e)
	}
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after the install:\n%s", v)
	}
	if h := chroot(t, root, "os-collect-config", "--help"); !strings.Contains(h, "usage") {
		t.Errorf("os-collect-config --help:\n%s", h)
	}
	if l := chroot(t, root, "dib-run-parts", "--list", "/usr/libexec/os-refresh-config/configure.d"); !strings.Contains(l, "55-heat-config") {
		t.Errorf("dib-run-parts --list configure.d:\n%s", l)
	}
	sameState(t, root, "install", state)

	// The image's element enables the unit.
	chroot(t, root, "/usr/bin/systemctl.real", "enable", unit)
	systemctlCalls(t, root)

	out = rpmIn(t, root, "-U", later)
	t.Logf("rpm -U:\n%s", out)
	calls = systemctlCalls(t, root)
	t.Logf("systemctl: %q", calls)
	if !called(calls, "try-restart "+unit) || !called(calls, "daemon-reload") {
		t.Errorf("the upgrade did not reload and try-restart: %q", calls)
	}
	for _, c := range calls {
		if strings.Contains(c, "preset") || strings.Contains(c, "enable ") || strings.Contains(c, "disable") ||
			strings.HasPrefix(c, "start") || strings.HasPrefix(c, "stop") {
			t.Errorf("the upgrade ran systemctl %s", c)
		}
	}
	if e := enabled(t, root); e != "enabled" {
		t.Errorf("after the upgrade the unit is %q, want enabled", e)
	}
	if q := strings.TrimSpace(rpmIn(t, root, "-q", "--qf", "%{RELEASE}", "tripleo-agent")); q != "2" {
		t.Errorf("after the upgrade: release %q", q)
	}
	noneMoved(t, root, "upgrade", later, out)
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after the upgrade:\n%s", v)
	}
	sameState(t, root, "upgrade", state)

	out = rpmIn(t, root, "-e", "tripleo-agent")
	t.Logf("rpm -e:\n%s", out)
	calls = systemctlCalls(t, root)
	if !called(calls, "--no-reload disable --now "+unit) {
		t.Errorf("the erase did not disable and stop the unit: %q", calls)
	}
	if e := enabled(t, root); e == "enabled" {
		t.Errorf("after the erase the unit is %q", e)
	}
	for _, p := range []string{"usr/bin/tripleo-agent", "usr/bin/os-collect-config", unitPath, "usr/libexec/heat-config/hooks/script"} {
		if exists(filepath.Join(root, p)) {
			t.Errorf("/%s is left after the erase", p)
		}
	}
	sameState(t, root, "erase", state)
}

// noneMoved reports any file of the package's paths moved aside: files
// owned by a package (an installed tripleo-agent's, RDO's being
// obsoleted) must stay where they are, so rpm -qf has to work from the
// chrooted %pre while rpm or dnf runs the transaction.
func noneMoved(t *testing.T, root, when, rpm, out string) {
	t.Helper()
	for p := range rpmFiles(t, rpm) {
		if m := movedTo(p); m != p && exists(filepath.Join(root, m)) {
			t.Errorf("%s: /%s was moved to /%s", when, p, m)
		}
	}
	if strings.Contains(out, "is kept as") {
		t.Errorf("%s: %%pre moved files:\n%s", when, out)
	}
}

// The scriptlets as written: the systemd macros' expansions.
func TestScriptlets(t *testing.T) {
	rpm := pkg(t, "")
	s := run(t, time.Minute, "rpm", "-qp", "--scripts", rpm)
	section := func(name string) string {
		i := strings.Index(s, name+" scriptlet")
		if i < 0 {
			t.Fatalf("no %s scriptlet:\n%s", name, s)
		}
		rest := s[i:]
		nl := strings.Index(rest, "\n") + 1
		if j := strings.Index(rest[nl:], " scriptlet (using"); j >= 0 {
			rest = rest[:strings.LastIndex(rest[:nl+j], "\n")+1]
		}
		return rest
	}
	for name, want := range map[string][]string{
		"postinstall":  {`if [ "$1" -eq 1 ]; then`, "systemctl --no-reload preset os-collect-config.service"},
		"preuninstall": {`if [ "$1" -eq 0 ]; then`, "systemctl --no-reload disable --now os-collect-config.service"},
		"postuninstall": {"systemctl daemon-reload", `if [ "$1" -ge 1 ]; then`,
			"systemctl try-restart os-collect-config.service"},
		"posttrans": {"systemctl --no-reload enable", `if [ -e "$state/enabled" ]`},
	} {
		body := section(name)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, body)
			}
		}
	}
	if strings.Contains(section("postinstall"), "enable") {
		t.Errorf("%%post enables the unit:\n%s", section("postinstall"))
	}
	if reqs := lines(t, rpm, "--requires"); !contains(reqs, "systemd") || !contains(reqs, "/bin/sh") {
		t.Errorf("requires %q: want systemd and /bin/sh (the scriptlets')", reqs)
	}
}

// fileState is what a byte-for-byte comparison of a file looks at.
type fileState = pkgtest.FileState

func stateOf(t *testing.T, path string) (fileState, bool) {
	t.Helper()
	return pkgtest.StateOf(t, path)
}

// pythonImage is test/deb's tree of the files the Python agent's
// elements put on an image outside any package (its README says whose).
const pythonImage = "../deb/testdata/python-image"

// pythonUnit is os-collect-config.service as the os-collect-config
// element writes it, with ExecStart where RDO's package puts the program.
const pythonUnit = "[Unit]\nDescription=Collect metadata and run hook commands.\nAfter=cloud-config.service\n" +
	"Before=crond.service\n\n[Service]\nExecStart=/usr/bin/os-collect-config\nRestart=on-failure\n\n" +
	"[Install]\nWantedBy=multi-user.target\n"

// placePythonImage copies the image's files over root, writes and
// enables the element's unit, and returns each file it placed.
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
		rel, _ := filepath.Rel(pythonImage, p)
		write(t, filepath.Join(root, rel), read(t, p), fi.Mode().Perm())
		placed[rel], _ = stateOf(t, filepath.Join(root, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, unitPath), pythonUnit, 0o644)
	placed[unitPath], _ = stateOf(t, filepath.Join(root, unitPath))
	chroot(t, root, "/usr/bin/systemctl.real", "enable", unit)
	return placed
}

// movedTo is where the image's file at path waits while the package is
// installed: the .deb's diversion name (packaging/README.md).
func movedTo(path string) string {
	const templates = "usr/libexec/os-apply-config/templates/"
	if rest, ok := strings.CutPrefix(path, templates); ok {
		return "usr/libexec/os-apply-config/templates.distrib/" + rest
	}
	return path + ".distrib"
}

// The way back in its RPM form: an image's own files at the package's
// paths are moved aside under the .deb's diversion names by %pre, wait
// there byte for byte, and come back on erase; its other files are
// untouched; the unit the image enabled stays enabled.
func TestWayBack(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	root := newRoot(t, true)
	image := placePythonImage(t, root)
	files := rpmFiles(t, rpm)

	out := rpmIn(t, root, "-i", rpm)
	t.Logf("rpm -i:\n%s", out)
	ours := 0
	for p, want := range image {
		if _, isOurs := files[p]; !isOurs {
			if got, _ := stateOf(t, filepath.Join(root, p)); got != want {
				t.Errorf("/%s, not a path of the package, changed: %+v", p, got)
			}
			continue
		}
		ours++
		if got, ok := stateOf(t, filepath.Join(root, movedTo(p))); !ok || got != want {
			t.Errorf("/%s: not kept as /%s (%v %+v)", p, movedTo(p), ok, got)
		}
		if !strings.Contains(out, "the image's /"+p+" is kept as /"+movedTo(p)) {
			t.Errorf("%%pre did not say it kept /%s", p)
		}
	}
	if ours < 5 {
		t.Errorf("only %d of the image's files are at the package's paths", ours)
	}
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after the install:\n%s", v)
	}
	if e := enabled(t, root); e != "enabled" {
		t.Errorf("the unit the image enabled is %q after the install", e)
	}

	out = rpmIn(t, root, "-e", "tripleo-agent")
	t.Logf("rpm -e:\n%s", out)
	for p, want := range image {
		if got, ok := stateOf(t, filepath.Join(root, p)); !ok || got != want {
			t.Errorf("/%s not back after the erase (%v %+v)", p, ok, got)
		}
		if exists(filepath.Join(root, movedTo(p))) && movedTo(p) != p {
			if _, isOurs := files[p]; isOurs {
				t.Errorf("/%s is left after the erase", movedTo(p))
			}
		}
	}
	if exists(filepath.Join(root, "usr/libexec/os-apply-config/templates.distrib")) {
		t.Error("templates.distrib is left after the erase")
	}
}

// A moved name already taken stops the install before anything moves.
func TestMovedNameTaken(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	root := newRoot(t, true)
	image := placePythonImage(t, root)
	const p = "usr/libexec/os-refresh-config/configure.d/55-heat-config"
	write(t, filepath.Join(root, movedTo(p)), "someone's\n", 0o644)
	out, err := rpmErr(root, "-i", rpm)
	t.Logf("rpm -i:\n%s", out)
	if err == nil {
		t.Fatal("rpm -i succeeded with /" + movedTo(p) + " taken")
	}
	if !strings.Contains(out, movedTo(p)+" exists") {
		t.Errorf("no message naming /%s", movedTo(p))
	}
	for q, want := range image {
		if got, ok := stateOf(t, filepath.Join(root, q)); !ok || got != want {
			t.Errorf("/%s changed by the failed install", q)
		}
	}
}

// RDO's packages as their spec files build them (rdo-packages'
// *-distgit): their names, the files and directories each owns, the
// os-collect-config unit and %config(noreplace) configuration, and the
// scriptlets %systemd_post/_preun/_postun expand to; versions at the
// last upstream releases. The content is a stand-in (no Python).
func rdoPackages(t *testing.T) []rpmbase.Spec {
	t.Helper()
	rdoUnit := "[Unit]\nDescription=Collect metadata and run hook commands.\nAfter=cloud-final.service\n" +
		"Before=crond.service\n\n[Service]\nExecStart=/usr/bin/os-collect-config\nRestart=on-failure\n" +
		"RestartForceExitStatus=SIGPIPE\nKillMode=process\nSendSIGKILL=no\n\n[Install]\nWantedBy=multi-user.target\n"
	py := func(s string) rpmbase.File {
		return rpmbase.File{Content: "#!/usr/bin/python3\n# " + s + "\n", Mode: 0o755}
	}
	site := "/usr/lib/python3.9/site-packages/"
	hook := func(name string) rpmbase.Spec {
		return rpmbase.Spec{Name: "python3-heat-agent-" + name, Version: "13.0.0", Release: "1.el9",
			Requires: []string{"python3-heat-agent"},
			Files:    map[string]rpmbase.File{"/usr/libexec/heat-config/hooks/" + name: py("hook-" + name + ".py")}}
	}
	return []rpmbase.Spec{
		{Name: "os-refresh-config", Version: "14.1.0", Release: "1.el9",
			Files: map[string]rpmbase.File{"/usr/bin/os-refresh-config": py("os-refresh-config"),
				"/usr/bin/dib-run-parts":                  py("dib-run-parts"),
				site + "os_refresh_config/__init__.py":    {Content: ""},
				"/usr/share/doc/os-refresh-config/README": {Content: "os-refresh-config\n"}},
			Dirs: []string{"/usr/libexec/os-refresh-config", "/usr/libexec/os-refresh-config/pre-configure.d",
				"/usr/libexec/os-refresh-config/configure.d", "/usr/libexec/os-refresh-config/migration.d",
				"/usr/libexec/os-refresh-config/post-configure.d"}},
		{Name: "os-apply-config", Version: "14.1.0", Release: "1.el9",
			Files: map[string]rpmbase.File{"/usr/bin/os-apply-config": py("os-apply-config"),
				"/usr/bin/os-config-applier":         py("os-config-applier"),
				site + "os_apply_config/__init__.py": {Content: ""}},
			Dirs: []string{"/usr/libexec/os-apply-config/templates"}},
		{Name: "os-collect-config", Version: "14.1.0", Release: "1.el9",
			Requires: []string{"os-refresh-config", "systemd"},
			Files: map[string]rpmbase.File{"/usr/bin/os-collect-config": py("os-collect-config"),
				"/" + confPath:                         {Content: "[DEFAULT]\ncommand=os-refresh-config\n", Config: true},
				"/" + unitPath:                         {Content: rdoUnit},
				site + "os_collect_config/__init__.py": {Content: ""}},
			Dirs: []string{"/var/lib/os-collect-config/local-data"},
			Scriptlets: map[string]string{
				"post":   "if [ $1 -eq 1 ] ; then\n  systemctl --no-reload preset os-collect-config.service >/dev/null 2>&1 || :\nfi",
				"preun":  "if [ $1 -eq 0 ] ; then\n  systemctl --no-reload disable --now os-collect-config.service >/dev/null 2>&1 || :\nfi",
				"postun": "systemctl daemon-reload >/dev/null 2>&1 || :",
			}},
		{Name: "python3-heat-agent", Version: "13.0.0", Release: "1.el9",
			Requires: []string{"os-collect-config", "os-apply-config", "os-refresh-config"},
			Files: map[string]rpmbase.File{
				"/usr/bin/heat-config-notify":                                            py("heat-config-notify"),
				"/usr/bin/heat-config-rebuild-deployed":                                  py("heat-config-rebuild-deployed"),
				"/usr/libexec/os-apply-config/templates/etc/os-collect-config.conf":      {Content: rdoConfTemplate, Mode: 0o600},
				"/usr/libexec/os-apply-config/templates/var/run/heat-config/heat-config": {Content: "{{deployments}}\n", Mode: 0o600},
				"/usr/libexec/os-refresh-config/configure.d/20-os-apply-config":          {Content: "#!/bin/bash\nset -ue\n\nexec os-apply-config\n", Mode: 0o755},
				"/usr/libexec/os-refresh-config/configure.d/55-heat-config":              py("55-heat-config"),
				"/usr/libexec/heat-config/hooks/script":                                  py("hook-script.py"),
			},
			Dirs: []string{"/usr/libexec/heat-config", "/usr/libexec/heat-config/hooks"}},
		hook("puppet"), hook("ansible"), hook("apply-config"), hook("hiera"), hook("json-file"),
		{Name: "python3-heat-agent-docker-cmd", Version: "13.0.0", Release: "1.el9",
			Requires: []string{"python3-heat-agent"},
			Files: map[string]rpmbase.File{"/usr/libexec/heat-config/hooks/docker-cmd": py("hook-docker-cmd.py"),
				"/usr/libexec/os-refresh-config/configure.d/50-heat-config-docker-cmd": py("50-heat-config-docker-cmd")}},
		{Name: "openstack-heat-agents", Version: "13.0.0", Release: "1.el9",
			Requires: []string{"python3-heat-agent = 13.0.0-1.el9", "python3-heat-agent-puppet = 13.0.0-1.el9",
				"python3-heat-agent-ansible = 13.0.0-1.el9", "python3-heat-agent-apply-config = 13.0.0-1.el9",
				"python3-heat-agent-hiera = 13.0.0-1.el9", "python3-heat-agent-json-file = 13.0.0-1.el9",
				"python3-heat-agent-docker-cmd = 13.0.0-1.el9"},
			Files: map[string]rpmbase.File{"/usr/share/doc/openstack-heat-agents/README.rst": {Content: "heat-agents\n"}}},
		// What else an overcloud image holds that needs the agent, by
		// the names RDO's packages provide.
		{Name: "tripleo-dependent", Version: "1", Release: "1",
			Requires: []string{"os-collect-config", "os-apply-config >= 5.0.0", "python3-heat-agent-puppet"}},
	}
}

// rdoConfTemplate is the head of heat-agents' template of
// /etc/os-collect-config.conf.
const rdoConfTemplate = "[DEFAULT]\n{{^os-collect-config.command}}\ncommand = os-refresh-config\n{{/os-collect-config.command}}\n" +
	"{{#os-collect-config}}\n{{#command}}\ncommand = {{command}}\n{{/command}}\n{{/os-collect-config}}\n"

// The swap from RDO's packages with rpm -U: every one is obsoleted, the
// operator's /etc/os-collect-config.conf is kept byte for byte (no
// .rpmsave), the unit the image enabled is enabled again after RDO's
// %preun disabled it, python3-heat-agent's template of the
// configuration stays (no longer owned), the node's state is kept, and
// what needed RDO's packages is satisfied by this one.
func TestSwapFromRDO(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	root := newRoot(t, true)
	dir := filepath.Join(t.TempDir(), "rdo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names, rpms []string
	for _, s := range rdoPackages(t) {
		p, err := rpmbase.Build(context.Background(), dir, s)
		if err != nil {
			t.Fatal(err)
		}
		rpms = append(rpms, p)
		names = append(names, s.Name)
	}
	rpmIn(t, root, append([]string{"-i"}, rpms...)...)
	chroot(t, root, "/usr/bin/systemctl.real", "enable", unit) // the image's element
	state := nodeState(t, root)                                // the operator's hand-written configuration
	if v, _ := rpmErr(root, "-V", "os-collect-config"); !strings.Contains(v, "/"+confPath) {
		t.Fatalf("the configuration is not a changed config file of RDO's package:\n%s", v)
	}
	systemctlCalls(t, root)

	out := rpmIn(t, root, "-U", rpm)
	t.Logf("rpm -U:\n%s", out)
	calls := systemctlCalls(t, root)
	t.Logf("systemctl: %q", calls)
	installed := rpmIn(t, root, "-qa", "--qf", "%{NAME}\n")
	for _, n := range names {
		if n == "tripleo-dependent" {
			if !strings.Contains(installed, n+"\n") {
				t.Errorf("%s was removed", n)
			}
			continue
		}
		if strings.Contains(installed, n+"\n") {
			t.Errorf("%s is still installed", n)
		}
	}
	sameState(t, root, "swap", state)
	noneMoved(t, root, "swap", rpm, out)
	if !called(calls, "--no-reload disable --now "+unit) {
		t.Errorf("RDO's %%preun did not run as expected: %q", calls)
	}
	if e := enabled(t, root); e != "enabled" {
		t.Errorf("after the swap the unit is %q, want enabled", e)
	}
	if u := read(t, filepath.Join(root, unitPath)); !strings.Contains(u, "WatchdogSec") && !strings.Contains(u, "Documentation=") {
		t.Errorf("the unit is not the package's:\n%s", u)
	}
	tpl := filepath.Join(root, "usr/libexec/os-apply-config/templates/etc/os-collect-config.conf")
	if got, ok := stateOf(t, tpl); !ok || got.Content != rdoConfTemplate || got.Mode.Perm() != 0o600 {
		t.Errorf("python3-heat-agent's template of the configuration is not kept: %v %+v", ok, got)
	}
	if o, err := rpmErr(root, "-qf", "/usr/libexec/os-apply-config/templates/etc/os-collect-config.conf"); err == nil {
		t.Errorf("the kept template is owned: %s", o)
	}
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after the swap:\n%s", v)
	}
	if deps, err := rpmErr(root, "-V", "--nofiles", "tripleo-dependent"); err != nil {
		t.Errorf("tripleo-dependent's dependencies after the swap: %v\n%s", err, deps)
	}
	for _, p := range []string{"usr/libexec/os-refresh-config/configure.d/55-heat-config", "usr/libexec/heat-config/hooks/puppet", "usr/bin/dib-run-parts"} {
		if l, err := os.Readlink(filepath.Join(root, p)); err != nil || !strings.HasSuffix(l, "tripleo-agent") {
			t.Errorf("/%s -> %q (%v), want the agent", p, l, err)
		}
	}
}

// dnf installs the package from a createrepo_c repository that holds it
// and the base package, resolving the dependencies from the metadata.
func TestDnfRepository(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	needTool(t, "createrepo_c", "apt-get install createrepo-c")
	needTool(t, "dnf", "apt-get install dnf")
	root := newRoot(t, false)
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rpm, base(t)} {
		run(t, time.Minute, "cp", p, repo+"/")
	}
	run(t, time.Minute, "createrepo_c", "--quiet", repo)
	out := run(t, 5*time.Minute, "dnf", "-y", "--installroot", root, "--releasever", "1",
		// The cache and the logs go under root, not the host's /var
		// (dnf takes these two as they are, installroot or not).
		"--setopt=reposdir=/dev/null", "--setopt=cachedir="+filepath.Join(root, "var/cache/dnf"),
		"--setopt=logdir="+filepath.Join(root, "var/log"), "--disableplugin=*",
		"--repofrompath=local,file://"+repo, "--nogpgcheck", "install", "tripleo-agent")
	t.Logf("dnf install:\n%s", out)
	got := strings.Fields(rpmIn(t, root, "-qa", "--qf", "%{NAME}\n"))
	sort.Strings(got)
	if strings.Join(got, " ") != "tripleo-agent tripleo-test-base" {
		t.Errorf("installed: %q, want tripleo-agent and the base package it needs", got)
	}
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after dnf install:\n%s", v)
	}
	if e := enabled(t, root); e != "disabled" {
		t.Errorf("after dnf install the unit is %q, want disabled (the preset)", e)
	}
}

// The README's install command on Fedora, CentOS and RHEL, which
// TestDnfSwap runs as it reads, in a root (--installroot and the options
// that keep dnf's cache and logs in it), for the package it built.
const readmeInstall = "sudo dnf install ./dist/tripleo-agent-*.x86_64.rpm"

// The command on a node with RDO's packages: dnf install
// ./tripleo-agent-*.rpm swaps them out in one transaction, keeping the
// operator's configuration and the unit's enablement.
func TestDnfSwap(t *testing.T) {
	t.Parallel()
	rpm := pkg(t, "")
	needTool(t, "dnf", "apt-get install dnf")
	root := newRoot(t, true)
	dir := filepath.Join(t.TempDir(), "rdo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var rpms []string
	for _, s := range rdoPackages(t) {
		p, err := rpmbase.Build(context.Background(), dir, s)
		if err != nil {
			t.Fatal(err)
		}
		rpms = append(rpms, p)
	}
	rpmIn(t, root, append([]string{"-i"}, rpms...)...)
	chroot(t, root, "/usr/bin/systemctl.real", "enable", unit)
	state := nodeState(t, root)
	install, err := doccmd.Args(readmeInstall, "dnf", rpm)
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, 5*time.Minute, "dnf", append([]string{"-y", "--installroot", root, "--releasever", "1",
		"--setopt=reposdir=/dev/null", "--setopt=cachedir=" + filepath.Join(root, "var/cache/dnf"),
		"--setopt=logdir=" + filepath.Join(root, "var/log"), "--disableplugin=*", "--nogpgcheck"},
		install...)...)
	t.Logf("dnf install:\n%s", out)
	got := strings.Fields(rpmIn(t, root, "-qa", "--qf", "%{NAME}\n"))
	sort.Strings(got)
	if strings.Join(got, " ") != "tripleo-agent tripleo-dependent tripleo-test-base" {
		t.Errorf("installed after the swap: %q", got)
	}
	sameState(t, root, "dnf swap", state)
	noneMoved(t, root, "dnf swap", rpm, out)
	if e := enabled(t, root); e != "enabled" {
		t.Errorf("after the swap the unit is %q, want enabled", e)
	}
	if v := rpmIn(t, root, "-V", "tripleo-agent"); strings.TrimSpace(v) != "" {
		t.Errorf("rpm -V after the swap:\n%s", v)
	}
}
