package deb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

// rootfs is the Debian 12 tree test/systemd/lab.sh builds and caches
// (`test/systemd/lab.sh rootfs`).
func rootfs() string {
	dir := os.Getenv("LAB_CACHE_DIR")
	if dir == "" {
		dir = "/var/cache/tripleo-agent-test"
	}
	return filepath.Join(dir, "rootfs-bookworm-v1")
}

// chroot runs a command in root with a clean environment; stdin is empty,
// so any question dpkg asked would fail the test.
func chroot(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	return chrootFor(t, 2*time.Minute, root, args...)
}

// chrootFor is chroot with a deadline of its own.
func chrootFor(t *testing.T, timeout time.Duration, root string, args ...string) (string, error) {
	t.Helper()
	return inRoot(t, timeout, append([]string{"chroot", root}, args...))
}

// chrootProc is chroot with /proc mounted in the root, in a private mount
// namespace that ends with the command (the host's mounts are untouched).
func chrootProc(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	needTool(t, "unshare", "util-linux")
	return inRoot(t, 2*time.Minute, append([]string{"unshare", "--mount", "--propagation", "private",
		"sh", "-c", `mount -t proc proc "$0/proc" && exec chroot "$0" "$@"`, root}, args...))
}

// inRoot runs argv, which enters the root, with the root's clean
// environment.
func inRoot(t *testing.T, timeout time.Duration, argv []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
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

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// fakePython builds stand-ins for Debian 12's Python packages: the same
// names, versions, dependencies between them and files under /usr/bin
// (dpkg -L on the real ones), without their Python dependencies.
func fakePython(t *testing.T, dir string) []string {
	t.Helper()
	type fake struct{ name, version, depends string }
	files := map[string][]string{
		"python3-os-collect-config": {"os-collect-config"},
		"python3-os-refresh-config": {"os-refresh-config"},
		"python3-os-apply-config":   {"os-apply-config", "os-config-applier"},
		"python3-dib-utils":         {"dib-run-parts"},
	}
	var debs []string
	for _, f := range []fake{
		{"python3-dib-utils", "0.0.11-2", ""},
		{"python3-os-refresh-config", "12.0.0-1", "python3-dib-utils"},
		{"python3-os-collect-config", "12.0.0-2", ""},
		{"python3-os-apply-config", "12.0.0-1", ""},
	} {
		root := filepath.Join(dir, f.name)
		control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: test <test@example.org>\n"+
			"Description: stand-in for Debian's %s\n", f.name, f.version, f.name)
		if f.depends != "" {
			control += "Depends: " + f.depends + "\n"
		}
		write(t, filepath.Join(root, "DEBIAN/control"), control, 0o644)
		for _, p := range files[f.name] {
			write(t, filepath.Join(root, "usr/bin", p), "#!/bin/sh\necho python "+p+"\n", 0o755)
		}
		deb := filepath.Join(dir, f.name+".deb")
		run(t, time.Minute, "dpkg-deb", "--root-owner-group", "-Znone", "--build", root, deb)
		debs = append(debs, deb)
	}
	return debs
}

func copyInto(t *testing.T, src, root, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, dst), string(b), 0o644)
	return dst
}

func status(t *testing.T, root, pkg string) string {
	out, err := chroot(t, root, "dpkg-query", "-W", "-f=${db:Status-Abbrev}${Version}", pkg)
	if err != nil {
		return "absent"
	}
	return strings.TrimSpace(out)
}

// In a copy of the rootfs (an image being built: no systemd): the Python
// packages are swapped out, the unit is enabled and nothing is started;
// then, as on a live node, an upgrade restarts it through policy-rc.d and a
// purge stops and disables it, keeping heat-config's and os-collect-config's
// state.
func TestChrootInstall(t *testing.T) {
	t.Parallel()
	deb := pkg(t, "")
	v := field(t, deb, "Version")
	next := pkg(t, v+"+1")
	root := newImageRoot(t)

	// policy-rc.d records what deb-systemd-invoke asks, and refuses it.
	policyLog := filepath.Join(root, "tmp/policy.log")
	write(t, filepath.Join(root, "usr/sbin/policy-rc.d"), "#!/bin/sh\necho \"$*\" >>/tmp/policy.log\nexit 101\n", 0o755)

	// A node the Python agent deployed: its packages and its state.
	args := []string{"dpkg", "-i"}
	for _, d := range fakePython(t, filepath.Join(work, "python")) {
		args = append(args, copyInto(t, d, root, "/tmp/python/"+filepath.Base(d)))
	}
	mustChroot(t, root, args...)
	const deployed = "var/lib/heat-config/deployed/x.json"
	const cache = "var/lib/os-collect-config/heat_local.json"
	write(t, filepath.Join(root, deployed), `{"id": "x"}`, 0o600)
	write(t, filepath.Join(root, cache), `{}`, 0o600)
	configureByHand(t, root)

	// The install swaps the Python packages out with no question.
	out := mustChroot(t, root, "dpkg", "-i", copyInto(t, deb, root, "/tmp/a.deb"))
	t.Logf("dpkg -i:\n%s", out)
	if s := status(t, root, "tripleo-agent"); s != "ii "+v {
		t.Errorf("tripleo-agent: %q after the install", s)
	}
	for _, p := range replaced {
		if s := status(t, root, p); strings.HasPrefix(s, "ii") {
			t.Errorf("%s still installed: %s", p, s)
		}
	}
	if b, err := os.ReadFile(policyLog); err == nil {
		t.Errorf("without systemd nothing is started, yet policy-rc.d was asked %q", b)
	}
	for _, p := range programs {
		target := pkgtest.BinTarget(p)
		if target == "" {
			if fi, err := os.Lstat(filepath.Join(root, "usr/bin", p)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("/usr/bin/%s is no binary: %v", p, err)
			}
			continue
		}
		if l, err := os.Readlink(filepath.Join(root, "usr/bin", p)); err != nil || l != target {
			t.Errorf("/usr/bin/%s -> %q: %v", p, l, err)
		}
	}
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants/os-collect-config.service")
	if l, err := os.Readlink(wants); err != nil || l != "/"+unitPath {
		t.Errorf("not enabled: %s -> %q: %v", wants, l, err)
	}
	if h := mustChroot(t, root, "os-collect-config", "--help"); !strings.Contains(h, "usage") {
		t.Errorf("os-collect-config --help:\n%s", h)
	}
	if l := mustChroot(t, root, "dib-run-parts", "--list", "/usr/libexec/os-refresh-config/configure.d"); !strings.Contains(l, "55-heat-config") {
		t.Errorf("dib-run-parts --list configure.d:\n%s", l)
	}
	// The hand-configured node keeps its configuration and converges,
	// pass after pass, on its changed data.
	converge(t, root, 1)
	converge(t, root, 2)
	dependents(t, root)

	// From here the scripts see a running systemd; policy-rc.d (as in
	// an image build) records and refuses every action.
	if err := os.MkdirAll(filepath.Join(root, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = mustChroot(t, root, "dpkg", "-i", copyInto(t, next, root, "/tmp/b.deb"))
	t.Logf("dpkg -i (upgrade):\n%s", out)
	if s := status(t, root, "tripleo-agent"); s != "ii "+v+"+1" {
		t.Errorf("tripleo-agent: %q after the upgrade", s)
	}
	if b, _ := os.ReadFile(policyLog); string(b) != "os-collect-config.service restart\n" {
		t.Errorf("policy-rc.d asked %q on the upgrade, want a restart only", b)
	}
	if _, err := os.Readlink(wants); err != nil {
		t.Errorf("not enabled after the upgrade: %v", err)
	}
	converge(t, root, 3)
	os.Remove(policyLog)

	out = mustChroot(t, root, "dpkg", "--purge", "tripleo-agent")
	t.Logf("dpkg --purge:\n%s", out)
	if b, _ := os.ReadFile(policyLog); string(b) != "os-collect-config.service stop\n" {
		t.Errorf("policy-rc.d asked %q on the purge, want a stop", b)
	}
	for _, gone := range []string{wants, filepath.Join(root, "usr/bin/tripleo-agent"), filepath.Join(root, unitPath),
		filepath.Join(root, "var/lib/systemd/deb-systemd-helper-enabled/os-collect-config.service.dsh-also")} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is left after the purge", gone)
		}
	}
	for _, kept := range []string{deployed, cache} {
		if _, err := os.Stat(filepath.Join(root, kept)); err != nil {
			t.Errorf("/%s is gone after the purge: %v", kept, err)
		}
	}
}

// handConf is /etc/os-collect-config.conf as an operator wrote it on a
// node with no Heat metadata: local data only, the package's chain as
// the command.
const handConf = `# Written by hand: this node is configured from /srv/node-data.
[DEFAULT]
command = os-refresh-config
collectors = local
polling_interval = 30

[local]
path = /srv/node-data
`

// configureByHand makes root a node configured by hand (issue 22): its
// own os-collect-config.conf, local data with no os-collect-config key,
// and an os-apply-config template of the operator's.
func configureByHand(t *testing.T, root string) {
	t.Helper()
	write(t, filepath.Join(root, "etc/os-collect-config.conf"), handConf, 0o600)
	write(t, filepath.Join(root, "usr/libexec/os-apply-config/templates/etc/node-greeting"), "{{greeting}}\n", 0o644)
}

// converge is one round on the hand-configured node: new local data (a
// greeting for the operator's template and a script deployment of its
// own), one os-collect-config --one-time pass, and then the
// configuration is byte-identical and both took the new data.
func converge(t *testing.T, root string, round int) {
	t.Helper()
	greeting := fmt.Sprintf("round %d", round)
	data, _ := json.Marshal(map[string]any{"greeting": greeting, "deployments": []any{map[string]any{
		"id": fmt.Sprintf("converge-%d", round), "name": "converge", "group": "script",
		"inputs": []any{}, "outputs": []any{}, "options": map[string]any{},
		"config": "#!/bin/sh\necho " + greeting + " > /srv/converged\n"}}})
	write(t, filepath.Join(root, "srv/node-data/node.json"), string(data), 0o600)
	out, err := chroot(t, root, "os-collect-config", "--one-time")
	if err != nil {
		t.Fatalf("round %d: os-collect-config --one-time: %v\n%s", round, err, out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/os-collect-config.conf")); err != nil || string(b) != handConf {
		t.Errorf("round %d: /etc/os-collect-config.conf is no longer the operator's (%v):\n%s", round, err, b)
	}
	if fi, err := os.Stat(filepath.Join(root, "etc/os-collect-config.conf")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("round %d: /etc/os-collect-config.conf: mode %v, want 0600", round, fi.Mode().Perm())
	}
	for _, f := range []string{"etc/node-greeting", "srv/converged"} {
		if b, err := os.ReadFile(filepath.Join(root, f)); err != nil || string(b) != greeting+"\n" {
			t.Errorf("round %d: /%s is %q (%v), want %q: the pass did not converge\n%s", round, f, b, err, greeting+"\n", out)
		}
	}
}

// dependents: with its versioned Provides, the package satisfies what
// depends on the Python packages, by name or by a version up to the one
// it matches (dpkg installs it, apt finds nothing broken), and not a
// later release.
func dependents(t *testing.T, root string) {
	t.Helper()
	dir := filepath.Join(work, "dependents")
	build := func(name, depends string) string {
		d := filepath.Join(dir, name)
		write(t, filepath.Join(d, "DEBIAN/control"), fmt.Sprintf("Package: %s\nVersion: 1.0\nArchitecture: all\n"+
			"Maintainer: test <test@example.org>\nDepends: %s\nDescription: depends on the Python agent\n", name, depends), 0o644)
		deb := filepath.Join(dir, name+".deb")
		run(t, time.Minute, "dpkg-deb", "--root-owner-group", "-Znone", "--build", d, deb)
		return copyInto(t, deb, root, "/tmp/dependents/"+name+".deb")
	}
	ok := build("uses-the-agent", "python3-os-collect-config, python3-os-collect-config (>= 12.0.0), "+
		"python3-os-apply-config (>= 5.0.0), python3-os-refresh-config (>= 12.0.0~), python3-dib-utils (>= 0.0.8)")
	later := build("needs-a-later-agent", "python3-os-collect-config (>= 13.0.0)")
	mustChroot(t, root, "dpkg", "-i", ok)
	if s := status(t, root, "uses-the-agent"); s != "ii 1.0" {
		t.Errorf("a dependent on the Python packages: %q after dpkg -i", s)
	}
	if out, err := chroot(t, root, "apt-get", "check"); err != nil {
		t.Errorf("apt-get check with the dependent installed: %v\n%s", err, out)
	}
	out, err := chroot(t, root, "dpkg", "-i", later)
	if err == nil || !strings.Contains(out, "python3-os-collect-config (>= 13.0.0)") {
		t.Errorf("a dependent on a later release was configured (%v):\n%s", err, out)
	}
	mustChroot(t, root, "dpkg", "--purge", "uses-the-agent", "needs-a-later-agent")
}
