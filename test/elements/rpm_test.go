package elements

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
	"github.com/tripleo-go/agent/internal/testkit/rpmbase"
)

// buildRPM builds a test package (internal/testkit/rpmbase) into dir.
func buildRPM(t *testing.T, dir string, s rpmbase.Spec) string {
	t.Helper()
	needTool(t, "rpmbuild", "apt-get install rpm")
	if s.Release == "" {
		s.Release = "1"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := rpmbase.Build(context.Background(), dir, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// baseRPM is rpmbase's base package: in the rpm database, what the Debian
// root has (the agent's scriptlets' /bin/sh, systemd, coreutils, grep...),
// so that rpm -i needs no --nodeps.
func baseRPM(t *testing.T) string {
	t.Helper()
	return once(t, "base.rpm", func() (string, error) {
		return rpmbase.Build(context.Background(), scratch, rpmbase.Base())
	})
}

// rpmRoot is a copy of the Debian rootfs made an rpm image: Debian's rpm
// and dnf installed in it with apt-get (from Debian's mirror, or the
// .debs and lists fetched last; the installed tree is kept beside the
// rootfs for a day: pkgtest.AptCache), its rpm database where an rpm
// distribution keeps it (/var/lib/rpm, not Debian's ~/.rpmdb),
// initialised, with the base package in it. Without withDNF, dnf is
// taken out of the copy: an image with rpm alone.
func rpmRoot(t *testing.T, withDNF bool) string {
	t.Helper()
	src := debianRootfs(t)
	base := baseRPM(t)
	template := once(t, "rpm-rootfs", func() (string, error) {
		// rpm and dnf as apt-get installed them in a copy of the rootfs,
		// kept beside it for a day (pkgtest.AptCache.Node).
		cache := pkgtest.NewAptCache(t, filepath.Dir(src), src, src, "rpm-dnf")
		node := cache.Node(t, func() string {
			root := copyRoot(t, src)
			write(t, filepath.Join(root, "usr/sbin/policy-rc.d"), "#!/bin/sh\nexit 101\n", 0o755)
			return root
		}, func(root string) func(args ...string) (string, error) {
			return func(args ...string) (string, error) {
				return chroot(t, root, append([]string{"apt-get", "-q", "-y", "--no-install-recommends"}, args...)...)
			}
		}, "rpm", "dnf")
		root := filepath.Join(scratch, "rpm-rootfs")
		if out, err := runErr(5*time.Minute, nil, "cp", "-a", "--reflink=auto", node+"/.", root+"/"); err != nil {
			return "", fmt.Errorf("copying %s: %v\n%s", node, err, out)
		}
		if out, err := chroot(t, root, "sh", "-c", "apt-get clean && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d"); err != nil {
			return "", fmt.Errorf("apt-get clean in the root: %v\n%s", err, out)
		}
		if err := os.MkdirAll(filepath.Join(root, "etc/rpm"), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(root, "etc/rpm/macros.dbpath"), []byte("%_dbpath /var/lib/rpm\n"), 0o644); err != nil {
			return "", err
		}
		b, err := os.ReadFile(base)
		if err == nil {
			err = os.WriteFile(filepath.Join(root, "tmp/base.rpm"), b, 0o644)
		}
		if err != nil {
			return "", err
		}
		if out, err := chroot(t, root, "sh", "-c", "rpm --initdb && rpm -i /tmp/base.rpm && rm /tmp/base.rpm"); err != nil {
			return "", fmt.Errorf("the root's rpm database: %v\n%s", err, out)
		}
		return root, nil
	})
	root := copyRoot(t, template)
	if !withDNF {
		for _, p := range []string{"usr/bin/dnf", "usr/bin/dnf-3", "usr/bin/yum"} {
			os.Remove(filepath.Join(root, p))
		}
	}
	return root
}

// put copies a file of the host into root's /tmp and returns its path
// there.
func put(t *testing.T, root, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dst := "/tmp/" + filepath.Base(file)
	write(t, filepath.Join(root, dst), string(b), 0o644)
	return dst
}

func rpmQuery(t *testing.T, root, pkg string) string {
	out, err := chroot(t, root, "rpm", "-q", "--qf", "%{NAME}-%{VERSION}", pkg)
	if err != nil {
		return "absent"
	}
	return strings.TrimSpace(out)
}

// On a CentOS image with rpm alone (no dnf or yum), the element installs
// the .rpm make rpm builds with rpm -Uvh, its scriptlets running, and no
// --nodeps; dpkg knows nothing of it.
func TestElementsOnRPMImage(t *testing.T) {
	t.Parallel()
	rpmFile := makePackage(t, "rpm")
	root := rpmRoot(t, false)
	// Both set, as a build for every family would: the image takes its kind.
	deb := filepath.Join(t.TempDir(), "tripleo-agent_all.deb")
	write(t, deb, "not used\n", 0o644)
	out, err := apply(t, root, t.TempDir(), []string{"DISTRO_NAME=centos", "DIB_TRIPLEO_AGENT_RPM=" + rpmFile,
		"DIB_TRIPLEO_AGENT_DEB=" + deb}, "os-collect-config")
	t.Logf("apply-elements:\n%s", out)
	if err != nil {
		t.Fatalf("apply-elements: %v", err)
	}
	if !strings.Contains(out, "Updating / installing...") {
		t.Errorf("the element did not install with rpm -Uvh")
	}
	if q := rpmQuery(t, root, "tripleo-agent"); !strings.HasPrefix(q, "tripleo-agent-") {
		t.Errorf("rpm -q tripleo-agent: %q", q)
	}
	if s := dpkgStatus(t, root, "tripleo-agent"); s != "absent" {
		t.Errorf("dpkg has tripleo-agent: %q", s)
	}
	if out := mustChroot(t, root, "rpm", "-V", "tripleo-agent"); strings.TrimSpace(out) != "" {
		t.Errorf("rpm -V tripleo-agent:\n%s", out)
	}
	afterBuild(t, root)
}

// On a CentOS image with dnf, where RDO's os-collect-config was
// installed: the element's dnf install of the file swaps it out in one
// step (the package's Obsoletes), the operator's configuration kept; the
// elements' packages come from the image's repository (a local one,
// createrepo_c) under their redhat names: package-installs' install and
// removal, and the script's install-packages -m.
func TestElementsOnRPMImageWithDNF(t *testing.T) {
	t.Parallel()
	needTool(t, "createrepo_c", "apt-get install createrepo-c")
	rpmFile := makePackage(t, "rpm")
	root := rpmRoot(t, true)
	repo := filepath.Join(root, "srv/rpmrepo")
	for _, n := range []string{"agent-test-tool-rpm", "agent-test-other-rpm", "agent-test-tool-deb", "agent-test-other-deb"} {
		buildRPM(t, repo, rpmbase.Spec{Name: n, Version: "1.0"})
	}
	run(t, 2*time.Minute, nil, "createrepo_c", "-q", repo)
	write(t, filepath.Join(root, "etc/yum.repos.d/local.repo"), "[local]\nname=local\nbaseurl=file:///srv/rpmrepo\ngpgcheck=0\nenabled=1\n", 0o644)

	// What RDO's os-collect-config left on the node, and what the
	// build removes.
	const conf = "[DEFAULT]\ncommand = os-refresh-config\n# the operator's\n"
	rdo := buildRPM(t, filepath.Join(scratch, "rdo"), rpmbase.Spec{Name: "os-collect-config", Version: "12.0.0",
		Requires: []string{"/bin/sh"},
		Files: map[string]rpmbase.File{"/usr/bin/os-collect-config": {Content: "#!/bin/sh\necho python\n", Mode: 0o755},
			"/etc/os-collect-config.conf": {Content: "[DEFAULT]\ncommand = os-refresh-config\n", Config: true}}})
	gone := buildRPM(t, filepath.Join(scratch, "gone"), rpmbase.Spec{Name: "agent-test-gone-rpm", Version: "1.0"})
	mustChroot(t, root, "rpm", "-i", put(t, root, rdo), put(t, root, gone))
	write(t, filepath.Join(root, "etc/os-collect-config.conf"), conf, 0o600)

	out, err := apply(t, root, testElement(t), []string{"DISTRO_NAME=centos", "DIB_TRIPLEO_AGENT_RPM=" + rpmFile}, "os-collect-config", "pkgtest")
	t.Logf("apply-elements:\n%s", out)
	if err != nil {
		t.Fatalf("apply-elements: %v", err)
	}
	for pkg, want := range map[string]string{"agent-test-tool-rpm": "agent-test-tool-rpm-1.0", "agent-test-other-rpm": "agent-test-other-rpm-1.0",
		"agent-test-gone-rpm": "absent", "agent-test-tool-deb": "absent", "os-collect-config": "absent"} {
		if got := rpmQuery(t, root, pkg); got != want {
			t.Errorf("rpm -q %s: %q, want %q", pkg, got, want)
		}
	}
	if q := rpmQuery(t, root, "tripleo-agent"); !strings.HasPrefix(q, "tripleo-agent-") {
		t.Errorf("rpm -q tripleo-agent: %q", q)
	}
	if q, err := chroot(t, root, "rpm", "-q", "--qf", "%{NAME}", "--whatprovides", "os-collect-config"); err != nil || q != "tripleo-agent" {
		t.Errorf("os-collect-config is provided by %q (%v)", q, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/os-collect-config.conf")); err != nil || string(b) != conf {
		t.Errorf("/etc/os-collect-config.conf after the swap: %q (%v), want the operator's", b, err)
	}
	afterBuild(t, root)
}
