package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImageRPM is issue 32's proof of the RPM on a booted node: the
// package, installed with rpm into an rpm database of the Debian root
// (its requirements met by a base package for what the root has, no
// --nodeps, its scriptlets running), leaves the unit disabled as Fedora's
// rule wants, the image's element enables it; the node boots, its agent
// takes a DeployedServer stack to CREATE_COMPLETE against the lab's
// undercloud like the golden .deb image's; rpm -U to a newer build
// restarts the daemon on the new binary, which re-runs nothing; rpm -e
// stops it and keeps the node's state. Figures on IMAGE lines.
func TestImageRPM(t *testing.T) {
	needLab(t)
	t.Parallel() // beside TestImage and TestDeploy (see TestImage)
	if res, err := Run(context.Background(), time.Minute, Cmd{Argv: []string{labSh(), "check"}}); err != nil {
		if os.Getenv("REQUIRE_E2E") == "1" {
			t.Fatalf("no systemd-nspawn lab here: %s", res.Stderr)
		}
		t.Skipf("no systemd-nspawn lab here: %s", res.Stderr)
	}
	b := buildRPMImage(t)
	t.Logf("IMAGE rpm build: package %s %.2f MB in %.1fs (release 2: %.1fs); image %.1fs: base package %.1fs (providing %s), copy of the rootfs and rpm -i %.1fs, elements %.1fs",
		filepath.Base(b.rpm), float64(b.rpmSize)/1e6, b.rpmBuild.Seconds(), b.nextBuild.Seconds(), b.image.Seconds(), b.baseBuild.Seconds(),
		strings.Join(b.provides, ", "), b.install.Seconds(), b.elements.Seconds())
	// Fedora's rule: the package's %post applies the preset (here the
	// base's "disable *", Fedora's default), the image enables the unit.
	if b.enabledByRPM != "disabled" || b.enabledByImage != "enabled" {
		t.Fatalf("os-collect-config.service is %q after rpm -i and %q after the elements, want disabled then enabled",
			b.enabledByRPM, b.enabledByImage)
	}

	const name = "image-rpm"
	st := imageStack(t, "create", name, "--replace", "--transport", PollServerHeat, "--signal", HeatSignal,
		"--structured-signal", HeatSignal, "--greeting", "hello")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var o *Outcome
	var waitErr error
	t0 := time.Now()
	go func() {
		defer close(done)
		o, waitErr = waitStack(ctx, name, stackTimeout+5*time.Minute)
	}()
	t.Cleanup(func() { cancel(); <-done })
	m := bootMachine(t, name, b.root, map[string]string{occConf: bootConf(t, st)})
	booted := time.Since(t0)

	u := m.unit("ActiveState", "SubState", "Type", "ActiveEnterTimestamp", "UnitFileState", "FragmentPath")
	if u["ActiveState"] != "active" || u["SubState"] != "running" || u["Type"] != "notify" || u["UnitFileState"] != "enabled" {
		t.Fatalf("after boot the unit is %v, want an enabled Type=notify unit active (running)", u)
	}
	if owner := m.must("rpm", "-qf", u["FragmentPath"]); !strings.HasPrefix(owner, "tripleo-agent-") {
		t.Errorf("the unit %s is not the package's: rpm -qf says %q", u["FragmentPath"], owner)
	}
	ready, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", u["ActiveEnterTimestamp"])
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if waitErr != nil {
		t.Fatal(waitErr)
	}
	if o.Status != "CREATE_COMPLETE" {
		t.Fatalf("stack %s: %s (%s)", name, o.Status, o.Reason)
	}
	wantOutputs(t, o, map[string]string{"result": "hello from the agent"})
	t.Logf("IMAGE rpm boot: systemd booted in %.1fs; boot to READY %.1fs; boot to CREATE_COMPLETE %.1fs",
		booted.Seconds(), ready.Sub(t0).Seconds(), o.seen().Sub(t0).Seconds())

	want := m.state()
	if !sameSet(want.Deployed, []string{ids(st)["e2e-deployment"]}) || len(want.ScriptRuns) != 1 || len(want.Signalled) != 1 {
		t.Fatalf("after the first boot: %+v, want the script deployed and run once, the os-apply-config deployment signalled", want)
	}
	same := func(t *testing.T, when string) {
		t.Helper()
		if got := m.state(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the node's state is %+v, was %+v: something re-ran", when, got, want)
		}
	}

	t.Run("upgrade", func(t *testing.T) { rpmUpgrade(t, m.in(t), b, same) })
	t.Run("erase", func(t *testing.T) { rpmErase(t, m.in(t), want) })
}

// in is the machine for a subtest: its helpers fail t, not the test that
// booted it.
func (m *machine) in(t *testing.T) *machine {
	c := *m
	c.t = t
	return &c
}

// rpmUpgrade: rpm -U to release 2 on the running node restarts the daemon
// on the new binary (%postun's try-restart), and its first pass runs
// nothing.
func rpmUpgrade(t *testing.T, m *machine, b rpmImage, same func(*testing.T, string)) {
	const pkg = "/root/tripleo-agent-next.rpm"
	if err := os.WriteFile(m.path(pkg), mustRead(t, b.next), 0o644); err != nil {
		t.Fatal(err)
	}
	before := m.unit("MainPID", "ExecMainStartTimestamp")
	t0 := time.Now()
	out := m.must("rpm", "-U", "-v", pkg)
	t.Logf("IMAGE rpm upgrade: rpm -U on the running node took %.1fs", time.Since(t0).Seconds())
	if got := strings.TrimSpace(m.must("rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", "tripleo-agent")); !strings.HasSuffix(got, "-2") {
		t.Fatalf("after rpm -U the package is %s, want release 2\n%s", got, out)
	}
	after := m.waitUnit(3*time.Minute, "the daemon restarted on the new binary", func(u map[string]string) bool {
		return u["MainPID"] != before["MainPID"] && u["MainPID"] != "0" && u["ActiveState"] == "active" && u["SubState"] == "running"
	}, "MainPID", "ActiveState", "SubState", "UnitFileState")
	if after["UnitFileState"] != "enabled" {
		t.Errorf("after rpm -U the unit is %s, want still enabled", after["UnitFileState"])
	}
	// the daemon runs the new binary, not the replaced one
	if exe := strings.TrimSpace(m.must("readlink", "/proc/"+after["MainPID"]+"/exe")); exe != "/usr/bin/tripleo-agent" {
		t.Errorf("after rpm -U the daemon runs %q, want /usr/bin/tripleo-agent", exe)
	}
	if v := m.must("tripleo-agent", "--version"); !strings.Contains(v, " "+b.nextVersion+" ") {
		t.Errorf("after rpm -U tripleo-agent --version says %q, want %s", v, b.nextVersion)
	}
	noCommand(t, m, "after rpm -U")
	same(t, "after rpm -U")
}

// rpmErase: rpm -e stops and disables the daemon and removes the
// programs, and keeps what the agent keeps on the node: its cache, the
// deployed state, and the operator's configuration.
func rpmErase(t *testing.T, m *machine, want NodeState) {
	kept := []string{"/var/lib/os-collect-config", "/var/lib/heat-config", occConf}
	before := map[string]map[string]string{}
	for _, p := range kept {
		before[p] = treeSums(t, m.path(p))
	}
	out := m.must("rpm", "-e", "-v", "tripleo-agent")
	if _, err := m.exec(time.Minute, "rpm", "-q", "tripleo-agent"); err == nil {
		t.Fatalf("tripleo-agent is still installed after rpm -e\n%s", out)
	}
	// %preun disabled and stopped it (whether systemd still has it loaded
	// depends on a daemon-reload, which is not asked for).
	u := m.unit("ActiveState", "LoadState", "UnitFileState")
	if u["ActiveState"] == "active" || u["UnitFileState"] == "enabled" {
		t.Errorf("after rpm -e the unit is %v, want stopped and not enabled", u)
	}
	if _, err := os.Lstat(m.path("/usr/bin/tripleo-agent")); err == nil {
		t.Errorf("/usr/bin/tripleo-agent is still there after rpm -e")
	}
	for _, p := range kept {
		if got := treeSums(t, m.path(p)); fmt.Sprint(got) != fmt.Sprint(before[p]) {
			t.Errorf("rpm -e changed %s: %v, was %v", p, got, before[p])
		}
	}
	if got := (Node{Dir: m.dir}).State(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after rpm -e the node's state is %+v, was %+v", got, want)
	}
}

// treeSums maps each file under root (or root itself, a file) to its
// mode and content's hash.
func treeSums(t *testing.T, root string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(root, p)
		sums[rel] = sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) == 0 {
		t.Fatalf("%s: nothing there", root)
	}
	return sums
}
