package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestImage is issue 12's proof: a golden image built from the elements
// (scripts/apply-elements, the .deb installed by the tripleo-agent
// element) boots under a real systemd, its agent becomes READY, takes a
// DeployedServer stack with a script and a puppet deployment to
// CREATE_COMPLETE against the lab's undercloud, logs with journal fields,
// re-runs nothing after a restart or a reboot, is restarted by the
// watchdog when stopped and converges again, and the README's
// troubleshooting commands work on it. Then a node the Python agent
// deployed is switched to the .deb with apt-get and re-runs nothing.
// Figures are logged on IMAGE lines.
func TestImage(t *testing.T) {
	needLab(t)
	// Beside TestDeploy and TestImageRPM: each its own machines (on
	// overlays of the image), stacks and nodes; nothing here counts the
	// lab's requests.
	t.Parallel()
	if res, err := Run(context.Background(), time.Minute, Cmd{Argv: []string{labSh(), "check"}}); err != nil {
		if os.Getenv("REQUIRE_E2E") == "1" {
			t.Fatalf("no systemd-nspawn lab here: %s", res.Stderr)
		}
		t.Skipf("no systemd-nspawn lab here: %s", res.Stderr)
	}
	b := buildImages(t)
	base := "cached"
	if !b.baseCached {
		base = "built"
	}
	t.Logf("IMAGE build: package %.2f MB in %.1fs; debootstrap rootfs %s (%.1fs); golden image (copy + elements) %.1fs; python image %.1fs",
		float64(b.debSize)/1e6, b.debBuild.Seconds(), base, b.base.Seconds(), b.goldenApply.Seconds(), b.pythonApply.Seconds())
	t.Run("golden", func(t *testing.T) { t.Parallel(); golden(t, "image-golden", b.golden) })
	t.Run("overcloud", func(t *testing.T) { t.Parallel(); overcloud(t, b.golden) })
	t.Run("upgrade", func(t *testing.T) { t.Parallel(); upgrade(t, b) })
	// The same steps on an image built elsewhere, e.g. by a real
	// diskimage-builder from the same elements (a directory: its root).
	if root := os.Getenv("IMAGE_TEST_ROOTFS"); root != "" {
		t.Run("given", func(t *testing.T) { golden(t, "image-given", root) })
	}
}

// imageStack creates a lab stack for a machine, deleted at the end.
func imageStack(t *testing.T, args ...string) *Stack {
	t.Helper()
	st, err := lab.stack(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() && keepLab() {
			return
		}
		if err := lab.DeleteStack(context.Background(), st.Name); err != nil {
			t.Log(err)
		}
	})
	return st
}

// bootConf is /etc/os-collect-config.conf as a DeployedServer's operator
// writes it before the first boot: the stack's settings, and
// os-refresh-config as the command.
func bootConf(t *testing.T, st *Stack) string {
	t.Helper()
	conf, err := os.ReadFile(st.ConfPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(conf), "[DEFAULT]\n", "[DEFAULT]\ncommand = os-refresh-config\n", 1)
}

func golden(t *testing.T, name, rootfs string) {
	st := imageStack(t, "create", name, "--replace", "--transport", PollServerHeat, "--signal", HeatSignal,
		"--structured-signal", HeatSignal, "--puppet", "--greeting", "hello")
	conf := bootConf(t, st)
	// Watched from before the boot, so that the time it completed is not
	// the time the boot returned (a slow image's boot may outlast it).
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
	m := bootMachine(t, name, rootfs, map[string]string{occConf: conf})
	booted := time.Since(t0)

	u := m.unit("ActiveState", "SubState", "Type", "ActiveEnterTimestamp", "UnitFileState")
	if u["ActiveState"] != "active" || u["SubState"] != "running" || u["Type"] != "notify" || u["UnitFileState"] != "enabled" {
		t.Fatalf("after boot the unit is %v, want an enabled Type=notify unit active (running)", u)
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
	wantOutputs(t, o, map[string]string{"result": "hello from the agent", "puppet_result": "puppet says hi hello"})
	t.Logf("IMAGE boot: systemd booted in %.1fs; boot to READY %.1fs; boot to CREATE_COMPLETE %.1fs",
		booted.Seconds(), ready.Sub(t0).Seconds(), o.seen().Sub(t0).Seconds())

	t.Run("status_agrees", func(t *testing.T) { statusAgrees(t, m) })
	t.Run("journal_fields", func(t *testing.T) { journalFields(t, m) })

	id := ids(st)
	want := m.state()
	if !sameSet(want.Deployed, []string{id["e2e-deployment"], id["e2e-puppet"]}) || len(want.ScriptRuns) != 1 || want.PuppetRuns != 1 {
		t.Fatalf("after the first boot: %+v, want the script and puppet deployed and run once each", want)
	}
	same := func(t *testing.T, when string) {
		t.Helper()
		if got := m.state(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: the node's state is %+v, was %+v: something re-ran", when, got, want)
		}
	}
	t.Run("restart", func(t *testing.T) {
		m.must("systemctl", "restart", "os-collect-config")
		noCommand(t, m, "after systemctl restart")
		same(t, "after systemctl restart")
	})
	t.Run("reboot", func(t *testing.T) {
		m.reboot()
		noCommand(t, m, "after a reboot")
		same(t, "after a reboot")
	})
	t.Run("watchdog", func(t *testing.T) {
		watchdog(t, m)
		same(t, "after the watchdog's restart")
		// and it converges: a change made now is deployed
		updated, err := lab.stack(context.Background(), "update", name, "--round", "2", "--agent-running")
		if err != nil {
			t.Fatal(err)
		}
		st = updated // the script deployment has a new id
		o, err := waitStack(context.Background(), name, stackTimeout)
		if err != nil || o.Status != "UPDATE_COMPLETE" {
			t.Fatalf("stack update after the watchdog's restart: %v %v", o, err)
		}
		wantOutputs(t, o, map[string]string{"round": "round 2"})
		want = m.state()
		if len(want.ScriptRuns) != 2 || want.PuppetRuns != 1 {
			t.Errorf("after the update: %+v, want the script run again and puppet not", want)
		}
	})
	t.Run("troubleshooting", func(t *testing.T) { troubleshooting(t, m, st) })
	t.Run("secrets", func(t *testing.T) { machineSecrets(t, m) })

	pid := m.unit("MainPID")["MainPID"]
	status := m.must("cat", "/proc/"+pid+"/status")
	kb := 0
	if i := strings.Index(status, "VmRSS:"); i >= 0 {
		fmt.Sscan(status[i+len("VmRSS:"):], &kb)
	}
	t.Logf("IMAGE agent: os-collect-config RSS %.1f MiB when idle on the booted node", float64(kb)/1024)
}

// statusJSON runs tripleo-agent-status --format json inside (--wait: until
// this boot's first pass ended) and returns its exit status and record.
type statusRecord struct {
	Health string
	Pass   *struct {
		Ended     time.Time
		Converged bool
		Command   *struct {
			Command string
			Exit    int
		}
	}
}

func agentStatus(t *testing.T, m *machine) (int, statusRecord) {
	t.Helper()
	out, err := m.exec(11*time.Minute, "tripleo-agent-status", "--wait", "--timeout", "600", "--format", "json")
	code := 0
	if err != nil {
		code = -1
		if m := regexp.MustCompile(`exit status (\d+)`).FindStringSubmatch(err.Error()); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
	}
	var s statusRecord
	if jerr := json.Unmarshal([]byte(out), &s); jerr != nil {
		t.Fatalf("tripleo-agent-status --format json: %v (%v)\n%s", jerr, err, out)
	}
	return code, s
}

// noCommand: the agent's first pass since it started converged with
// nothing new to run.
func noCommand(t *testing.T, m *machine, when string) {
	t.Helper()
	code, s := agentStatus(t, m)
	if code != 0 || s.Health != "healthy" || s.Pass == nil || s.Pass.Command != nil {
		t.Errorf("%s: tripleo-agent-status exit %d, %+v; want healthy with no command run", when, code, s)
	}
}

// statusAgrees: systemctl status and tripleo-agent-status say the same
// thing about the last pass (systemd's STATUS line is sent at its end).
func statusAgrees(t *testing.T, m *machine) {
	text := m.must("systemctl", "status", "--no-pager", "os-collect-config")
	if !strings.Contains(text, "active (running)") || !strings.Contains(text, "Status: \"last pass ") {
		t.Errorf("systemctl status:\n%s", text)
	}
	line := regexp.MustCompile(`^last pass (\S+): command exit (-?\d+)$`)
	for try := 0; ; try++ {
		code, s := agentStatus(t, m)
		got := line.FindStringSubmatch(m.unit("StatusText")["StatusText"])
		if code != 0 || s.Health != "healthy" || s.Pass == nil || got == nil {
			t.Fatalf("tripleo-agent-status exit %d %+v; systemd's status %q", code, s, got)
		}
		at, _ := time.Parse(time.RFC3339, got[1])
		exit := 0
		if s.Pass.Command != nil {
			exit = s.Pass.Command.Exit
		}
		if math.Abs(at.Sub(s.Pass.Ended).Seconds()) <= 2 && got[2] == strconv.Itoa(exit) {
			return
		}
		if try == 5 { // a pass may end between the two reads; not six times
			t.Fatalf("systemd says %q, tripleo-agent-status says the pass ended %s with exit %d", got[0], s.Pass.Ended, exit)
		}
		time.Sleep(time.Second)
	}
}

// journalFields: the agent's journal entries carry the collector, command
// and deployment fields.
func journalFields(t *testing.T, m *machine) {
	out := m.must("journalctl", "-u", "os-collect-config", "-o", "json", "--no-pager")
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		for _, f := range []string{"COLLECTOR", "COMMAND", "COMMAND_EXIT", "DEPLOYMENT_ID", "DEPLOYMENT_NAME", "DEPLOYMENT_GROUP", "DEPLOYMENT_STATUS_CODE"} {
			if v, ok := e[f].(string); ok && v != "" {
				seen[f+"="+v] = true
				seen[f] = true
			}
		}
	}
	for _, want := range []string{"COLLECTOR=heat", "COMMAND=os-refresh-config", "COMMAND_EXIT=0", "DEPLOYMENT_ID",
		"DEPLOYMENT_NAME=e2e-puppet", "DEPLOYMENT_GROUP=puppet", "DEPLOYMENT_NAME=e2e-deployment", "DEPLOYMENT_STATUS_CODE=0"} {
		if !seen[want] {
			t.Errorf("no journal entry of os-collect-config.service with %s", want)
		}
	}
}

// watchdog: a SIGSTOPped daemon is killed by systemd's watchdog and
// restarted, and its first pass converges. WatchdogSec is shortened for
// the test by a drop-in, as an operator would.
func watchdog(t *testing.T, m *machine) {
	dropIn := m.path("/etc/systemd/system/os-collect-config.service.d/50-test-watchdog.conf")
	if err := os.MkdirAll(strings.TrimSuffix(dropIn, "/50-test-watchdog.conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dropIn, []byte("[Service]\nWatchdogSec=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.must("systemctl", "daemon-reload")
	m.must("systemctl", "restart", "os-collect-config")
	before := m.unit("MainPID", "NRestarts")
	// bash's kill: a minimal image (diskimage-builder's) has no procps
	if _, err := m.sh("kill -STOP " + before["MainPID"]); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	after := m.waitUnit(3*time.Minute, "a restart by the watchdog", func(u map[string]string) bool {
		return u["MainPID"] != before["MainPID"] && u["MainPID"] != "0" && u["ActiveState"] == "active" && u["SubState"] == "running"
	}, "MainPID", "NRestarts", "ActiveState", "SubState")
	t.Logf("IMAGE watchdog: SIGSTOP to running again (READY) in %.1fs; NRestarts %s -> %s",
		time.Since(t0).Seconds(), before["NRestarts"], after["NRestarts"])
	if out := m.must("journalctl", "-u", "os-collect-config", "--no-pager", "-g", "[Ww]atchdog timeout"); !strings.Contains(out, "atchdog timeout") {
		t.Errorf("the journal does not show the watchdog's timeout")
	}
	noCommand(t, m, "after the watchdog's restart")
}

// machineSecrets: no secret of the lab in the machine's journal (every
// field of every entry, all units, all boots: the agent and what it ran
// log there), nor in any file of /etc, /var, /root, /tmp, /opt or /run
// that is not private.
func machineSecrets(t *testing.T, m *machine) {
	journal := m.must("journalctl", "-o", "verbose", "--no-pager")
	hits := labSecrets.ScanJournal(m.name+" journal", journal)
	skip := func(rel string) bool { // under /var: scanned above, or the package manager's
		return slices.Contains([]string{"log/journal", "cache/apt", "lib/apt", "lib/dpkg"}, rel)
	}
	for _, dir := range []string{"etc", "var", "root", "tmp", "opt"} {
		hits = append(hits, labSecrets.ScanTree(m.path(dir), skip)...)
	}
	res, err := Run(context.Background(), 2*time.Minute, Cmd{Argv: []string{labSh(), "exec", m.dir, "tar", "-C", "/run", "-cf", "-", "."}, Env: labEnv()})
	if err != nil && len(res.Stdout) == 0 {
		t.Fatalf("reading the machine's /run: %v\n%s", err, res.Stderr)
	}
	hits = append(hits, labSecrets.ScanTar(m.name+":/run", bytes.NewReader(res.Stdout))...)
	for _, h := range hits {
		t.Errorf("secret leaked: %s", h)
	}
	t.Logf("IMAGE secrets: %d journal lines scanned; so far %s", strings.Count(journal, "\n"), labSecrets.Summary())
}
