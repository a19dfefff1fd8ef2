// Package systemd runs os-collect-config under a real systemd: lab.sh boots
// a throw-away Debian 12 container (systemd-nspawn --boot) from an image
// holding what `make install` puts in a golden image, with the unit
// enabled, and the test drives it with systemctl and reads journalctl.
//
// It boots a container and may install host packages, so it runs only
// when asked: REQUIRE_SYSTEMD_LAB=1 (make systemd-test; fails when it
// cannot run) or SYSTEMD_LAB=1 (skips when it cannot run). LAB_KEEP=1
// keeps the lab's directory (journal, console log) afterwards.
package systemd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	unit     = "os-collect-config.service"
	testDir  = "/var/lib/occ-test" // the hook's log and switches
	localDir = testDir + "/local"  // the local collector's directory
	runsLog  = testDir + "/runs"
	hook     = "/usr/local/bin/occ-test-hook"
	confPath = "/etc/os-collect-config.conf"
	dropIn   = "/etc/systemd/system/" + unit + ".d/50-test-watchdog.conf"
)

// config is /etc/os-collect-config.conf; min and max polling intervals are
// equal and long, so a command run seconds after a change is the
// file watch's doing, not a poll's.
func config(tag string) string {
	return fmt.Sprintf(`[DEFAULT]
command = %s %s
collectors = local
min_polling_interval = 60
polling_interval = 60

[local]
path = %s
`, hook, tag, localDir)
}

// hookScript is the command: it logs start, end (with its exit status) and
// SIGTERM of each run to runsLog; the files hook-sleep and hook-exit set
// how long it runs and how it exits.
const hookScript = `#!/bin/sh
d=` + testDir + `
tag=$1
trap 'echo "term $tag $$ $(date +%s.%N)" >>$d/runs; exit 143' TERM
echo "start $tag $$ $(date +%s.%N) $OS_CONFIG_FILES" >>$d/runs
echo "occ-test-hook $tag: OS_CONFIG_FILES=$OS_CONFIG_FILES"
s=$(cat $d/hook-sleep 2>/dev/null || echo 0)
[ "$s" = 0 ] || { sleep "$s" & wait $!; }
rc=$(cat $d/hook-exit 2>/dev/null || echo 0)
echo "end $tag $$ $(date +%s.%N) $rc" >>$d/runs
exit "$rc"
`

func TestOSCollectConfigUnit(t *testing.T) {
	requireLab(t)
	l := boot(t)

	t.Run("boot", func(t *testing.T) {
		if got := l.prop(t, "ActiveState"); got != "active" {
			t.Errorf("after boot the enabled unit is %q, want active", got)
		}
		if r := l.findRun(t, 0, "/boot.json"); r == nil || !r.ended {
			t.Errorf("the command did not run for boot.json at boot (runs: %v)", l.runs(t))
		}
	})

	t.Run("start_waits_for_READY", func(t *testing.T) {
		l.sh(t, "systemctl stop "+unit+"; systemctl reset-failed "+unit+" 2>/dev/null; true")
		// The first cycle has a change and a command that takes 2 s.
		l.write(t, testDir+"/hook-sleep", "2")
		defer l.write(t, testDir+"/hook-sleep", "0")
		l.write(t, localDir+"/first.json", `{"first": true}`)
		t0 := now()
		if out, err := l.exec(60*time.Second, "", "systemctl", "start", unit); err != nil {
			t.Fatalf("systemctl start: %v\n%s", err, out)
		}
		t1 := now()
		t.Logf("systemctl start blocked %.2fs", t1-t0)
		r := l.findRun(t, t0, "/first.json")
		switch {
		case r == nil:
			t.Errorf("systemctl start returned, but the first cycle did not run the command")
		case !r.ended || r.end > t1:
			t.Errorf("systemctl start returned before the first cycle's command ended (returned %.3f, run %v)", t1, r)
		case t1-t0 < 2:
			t.Errorf("systemctl start took %.2fs, less than the command's 2 s", t1-t0)
		}
		// systemd logs "Started ..." when READY=1 arrives.
		for _, e := range l.journal(t, t0) {
			if strings.HasPrefix(str(e, "MESSAGE"), "Started ") && r != nil && r.ended {
				if ts := realtime(e); ts < r.end {
					t.Errorf("%q at %.3f, before the command ended at %.3f", str(e, "MESSAGE"), ts, r.end)
				}
			}
		}
		p := l.props(t, "ActiveState", "SubState", "StatusText", "Type")
		if p["ActiveState"] != "active" || p["SubState"] != "running" || p["Type"] != "notify" {
			t.Errorf("unit state %v, want active (running), Type=notify", p)
		}
		if !regexp.MustCompile(`^last pass \S+: command exit 0$`).MatchString(p["StatusText"]) {
			t.Errorf("StatusText = %q, want \"last pass <time>: command exit 0\"", p["StatusText"])
		}
		status, _ := l.exec(10*time.Second, "", "systemctl", "status", "--no-pager", unit)
		if !strings.Contains(status, "active (running)") || !strings.Contains(status, `Status: "last pass `) {
			t.Errorf("systemctl status lacks active (running) or our Status:\n%s", status)
		}
	})

	t.Run("command_runs_on_change", func(t *testing.T) {
		l.ensureActive(t)
		last := l.lastPass(t)
		t0 := now()
		l.write(t, localDir+"/wake.json", `{"wake": 1}`)
		r := l.waitRun(t, t0, "/wake.json", false, 10*time.Second)
		if r == nil {
			t.Fatalf("no command run for wake.json within 10s (runs: %v)", l.runs(t))
		}
		t.Logf("command started %.2fs after the write, %.1fs after the previous pass", r.start-t0, r.start-last)
		if r.start-t0 > 5 {
			t.Errorf("the command started %.2fs after the write, want < 5s", r.start-t0)
		}
		if r.start-last > 55 {
			t.Errorf("the run came %.1fs after the previous pass: a poll (every 60s), not the watch, may have found it", r.start-last)
		}
		if !strings.Contains(r.files, "/var/lib/os-collect-config/") || !strings.Contains(r.files, "/first.json") {
			t.Errorf("OS_CONFIG_FILES = %q, want every key's cache file", r.files)
		}
		l.waitRun(t, t0, "/wake.json", true, 10*time.Second)
	})

	t.Run("journal", func(t *testing.T) {
		l.ensureActive(t)
		t0 := now()
		// Today's structured entry: the local collector's error for a bad file.
		l.write(t, localDir+"/bad.json", "{not json")
		var bad map[string]any
		waitFor(t, 10*time.Second, "the journal entry for bad.json", func() bool {
			bad = find(l.journal(t, t0), func(e map[string]any) bool {
				return strings.Contains(str(e, "MESSAGE"), "bad.json is not valid JSON")
			})
			return bad != nil
		})
		l.sh(t, "rm "+localDir+"/bad.json")
		if bad != nil {
			want := map[string]string{"SYSLOG_IDENTIFIER": "os-collect-config", "_TRANSPORT": "journal",
				"_SYSTEMD_UNIT": unit, "COLLECTOR": "local", "PRIORITY": "3"}
			for k, v := range want {
				if got := str(bad, k); got != v {
					t.Errorf("bad.json entry: %s=%q, want %q", k, got, v)
				}
			}
		}

		// New key (command 1 s), modified key, a failing and a good run.
		l.write(t, testDir+"/hook-sleep", "1")
		t1 := now()
		l.write(t, localDir+"/j1.json", `{"v": 1}`)
		r1 := l.waitRun(t, t1, "/j1.json", true, 15*time.Second)
		l.write(t, testDir+"/hook-sleep", "0")
		t2 := now()
		l.write(t, localDir+"/j1.json", `{"v": 2}`)
		r2 := l.waitRun(t, t2, "/j1.json", true, 10*time.Second)
		l.write(t, testDir+"/hook-exit", "3")
		t3 := now()
		l.write(t, localDir+"/j2.json", `{"v": 3}`)
		r3 := l.waitRun(t, t3, "/j2.json", true, 10*time.Second)
		l.write(t, testDir+"/hook-exit", "0")
		t4 := now()
		l.write(t, localDir+"/j3.json", `{"v": 4}`)
		r4 := l.waitRun(t, t4, "/j3.json", true, 10*time.Second)
		if r1 == nil || r2 == nil || r3 == nil || r4 == nil {
			t.Fatalf("missing runs: %v", l.runs(t))
		}
		if r3.exit != 3 || r4.exit != 0 {
			t.Errorf("hook exits %d, %d; want 3, 0", r3.exit, r4.exit)
		}
		time.Sleep(500 * time.Millisecond) // let journald catch up
		entries := l.journal(t, t0)

		ours := 0
		for _, e := range entries {
			if str(e, "_TRANSPORT") == "journal" && str(e, "_SYSTEMD_UNIT") == unit {
				ours++
				if id := str(e, "SYSLOG_IDENTIFIER"); id != "os-collect-config" {
					t.Errorf("native entry with SYSLOG_IDENTIFIER=%q: %v", id, e)
				}
			}
		}
		t.Logf("%d entries since the step began, %d native from the daemon", len(entries), ours)
		if find(entries, func(e map[string]any) bool {
			return str(e, "_TRANSPORT") == "stdout" && str(e, "SYSLOG_IDENTIFIER") == "os-collect-config" &&
				strings.HasPrefix(str(e, "MESSAGE"), "occ-test-hook v1: OS_CONFIG_FILES=")
		}) == nil {
			t.Errorf("the command's output is not in the unit's journal as os-collect-config's stdout")
		}
		if find(entries, func(e map[string]any) bool {
			return strings.HasPrefix(str(e, "MESSAGE"), "Command failed, will not cache new data.") && str(e, "PRIORITY") == "3"
		}) == nil {
			t.Errorf("no error entry for the command that exited 3")
		}

		t.Run("fields", func(t *testing.T) {
			key := cacheKey(r1.files, "/j1.json")
			t.Logf("the cache key of j1.json is %q", key)
			for _, c := range []struct {
				change string
				after  float64
			}{{"new", t1}, {"modified", t2}} {
				if find(entries, func(e map[string]any) bool {
					return str(e, "COLLECTOR") == "local" && str(e, "KEY") == key && str(e, "CHANGE") == c.change &&
						realtime(e) >= c.after
				}) == nil {
					t.Errorf("no journal entry with COLLECTOR=local KEY=%s CHANGE=%s", key, c.change)
				}
			}
			// One entry per run, in order, agreeing with the hook's own log
			// (a failed pass keeps its changes, so a second wake-up from
			// one write may run the command again: count, do not assume).
			var hookRuns []*run
			for _, r := range l.runs(t) {
				if r.start >= t0 {
					hookRuns = append(hookRuns, r)
				}
			}
			// The per-run event is at priority info; the error line of a
			// failed run carries the same fields. (The previous step's
			// last run may be logged after t0.)
			var cmds []map[string]any
			for _, e := range entries {
				if str(e, "COMMAND") != "" && realtime(e) >= r1.start {
					if str(e, "PRIORITY") == "6" {
						cmds = append(cmds, e)
					} else {
						t.Logf("also with COMMAND fields: PRIORITY=%s %q", str(e, "PRIORITY"), str(e, "MESSAGE"))
					}
				}
			}
			if len(cmds) != len(hookRuns) {
				t.Errorf("%d info entries with COMMAND, want one per run (%d)", len(cmds), len(hookRuns))
			}
			for i := 0; i < len(cmds) && i < len(hookRuns); i++ {
				e, r := cmds[i], hookRuns[i]
				if got := str(e, "COMMAND"); got != hook+" v1" {
					t.Errorf("COMMAND=%q, want %q", got, hook+" v1")
				}
				if got := str(e, "COMMAND_EXIT"); got != strconv.Itoa(r.exit) {
					t.Errorf("run %d: COMMAND_EXIT=%q, the hook exited %d", i, got, r.exit)
				}
				secs, err := strconv.ParseFloat(str(e, "COMMAND_SECONDS"), 64)
				if d := r.end - r.start; err != nil || secs < d-0.05 || secs > d+1 {
					t.Errorf("run %d: COMMAND_SECONDS=%q, the hook ran %.3fs", i, str(e, "COMMAND_SECONDS"), d)
				}
			}
			if len(cmds) > 0 {
				e := cmds[0]
				t.Logf("%d runs; the first: MESSAGE=%q COMMAND=%q COMMAND_EXIT=%q COMMAND_SECONDS=%q", len(cmds),
					str(e, "MESSAGE"), str(e, "COMMAND"), str(e, "COMMAND_EXIT"), str(e, "COMMAND_SECONDS"))
			}
		})
	})

	t.Run("watchdog", func(t *testing.T) {
		l.write(t, dropIn, "[Service]\nWatchdogSec=3s\n")
		l.sh(t, "systemctl daemon-reload && systemctl reset-failed "+unit+" 2>/dev/null; systemctl restart "+unit)
		base := l.props(t, "WatchdogUSec", "MainPID", "NRestarts", "ActiveState")
		if base["WatchdogUSec"] != "3s" || base["ActiveState"] != "active" {
			t.Fatalf("after the drop-in: %v, want WatchdogUSec=3s, active", base)
		}
		t0 := now()
		pings := map[string]bool{}
		steady := func(what string) {
			p := l.props(t, "ActiveState", "SubState", "MainPID", "WatchdogTimestampMonotonic")
			if p["ActiveState"] != "active" || p["SubState"] != "running" || p["MainPID"] != base["MainPID"] {
				t.Errorf("%s: %v, want active (running), MainPID %s", what, p, base["MainPID"])
			}
			pings[p["WatchdogTimestampMonotonic"]] = true
		}
		for now() < t0+11 {
			steady("idle")
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("idle 11s: %d distinct watchdog timestamps", len(pings))
		if len(pings) < 4 {
			t.Errorf("watchdog timestamps seen while idle: %d, want pings every ~1.5s", len(pings))
		}

		l.write(t, testDir+"/hook-sleep", "8")
		defer l.write(t, testDir+"/hook-sleep", "0")
		t1 := now()
		l.write(t, localDir+"/wd.json", `{"wd": 1}`)
		r := l.waitRun(t, t1, "/wd.json", false, 10*time.Second)
		for r != nil && !r.ended && now() < t1+20 {
			steady("while the 8 s command runs")
			time.Sleep(500 * time.Millisecond)
			r = l.findRun(t, t1, "/wd.json")
		}
		if r == nil || !r.ended || r.term || r.exit != 0 {
			t.Errorf("the 8 s command did not end normally: %+v", r)
		} else {
			t.Logf("8 s command ran %.1fs", r.end-r.start)
		}
		p := l.props(t, "NRestarts", "MainPID")
		if p["NRestarts"] != base["NRestarts"] || p["MainPID"] != base["MainPID"] {
			t.Errorf("restarted: %v, before %v", p, base)
		}
		for _, e := range l.journal(t, t0) {
			if m := str(e, "MESSAGE"); strings.Contains(m, "atchdog") || strings.Contains(m, "SIGABRT") {
				t.Errorf("journal: %s", m)
			}
		}
	})

	// The drop-in stays: a re-executed daemon must keep feeding the watchdog.
	t.Run("sighup_rereads_config", func(t *testing.T) {
		l.reloadTest(t, "v2", func() (string, error) {
			return l.exec(10*time.Second, "", "systemctl", "kill", "-s", "HUP", "--kill-who=main", unit)
		})
	})

	t.Run("systemctl_reload", func(t *testing.T) {
		if can := l.prop(t, "CanReload"); can != "yes" {
			out, err := l.exec(10*time.Second, "", "systemctl", "reload", unit)
			t.Skipf("CanReload=%s (the unit has no ExecReload=): systemctl reload: %v %s", can, err, strings.TrimSpace(out))
		}
		l.reloadTest(t, "v3", func() (string, error) {
			return l.exec(30*time.Second, "", "systemctl", "reload", unit)
		})
	})

	t.Run("stop_during_command", func(t *testing.T) {
		l.ensureActive(t)
		l.write(t, testDir+"/hook-sleep", "60")
		defer l.write(t, testDir+"/hook-sleep", "0")
		t0 := now()
		l.write(t, localDir+"/stop.json", `{"stop": 1}`)
		r := l.waitRun(t, t0, "/stop.json", false, 10*time.Second)
		if r == nil {
			t.Fatal("the long command did not start")
		}
		time.Sleep(300 * time.Millisecond) // into its sleep
		t1 := now()
		out, err := l.exec(60*time.Second, "", "systemctl", "stop", unit)
		took := now() - t1
		t.Logf("systemctl stop took %.2fs", took)
		if err != nil {
			t.Errorf("systemctl stop: %v\n%s", err, out)
		}
		if took >= 30 {
			t.Errorf("systemctl stop took %.1fs, TimeoutStopSec is 30s", took)
		}
		if r = l.findRun(t, t0, "/stop.json"); r == nil || !r.term {
			t.Errorf("the command did not get SIGTERM: %+v", r)
		}
		p := l.props(t, "Result", "ActiveState", "ExecMainCode", "ExecMainStatus")
		t.Logf("after stop: %v", p)
		if p["Result"] != "success" || p["ActiveState"] != "inactive" {
			var lines []string
			for _, e := range l.journal(t, t1) {
				lines = append(lines, str(e, "SYSLOG_IDENTIFIER")+": "+str(e, "MESSAGE"))
			}
			t.Errorf("after stop: Result=%s ActiveState=%s, want success, inactive; journal:\n%s",
				p["Result"], p["ActiveState"], strings.Join(lines, "\n"))
		}
		ps := l.sh(t, "ps -eo pid,args")
		for _, line := range strings.Split(ps, "\n") {
			if strings.Contains(line, "occ-test-hook") || strings.Contains(line, "sleep 60") ||
				strings.Contains(line, "os-collect-config") {
				t.Errorf("left over after stop: %s", line)
			}
		}
	})
}

// reloadTest changes the command in the config to tag, has reload make the
// daemon re-read it, and checks the next change runs the new command in
// the same process.
func (l *lab) reloadTest(t *testing.T, tag string, reload func() (string, error)) {
	l.ensureActive(t)
	pid := l.prop(t, "MainPID")
	t0 := now()
	l.write(t, confPath, config(tag))
	if out, err := reload(); err != nil {
		t.Fatalf("reload: %v\n%s", err, out)
	}
	waitFor(t, 10*time.Second, "the daemon to say it restarts", func() bool {
		return find(l.journal(t, t0), func(e map[string]any) bool {
			return strings.Contains(str(e, "MESSAGE"), "SIGHUP received; restarting")
		}) != nil
	})
	time.Sleep(time.Second) // the re-executed daemon's first pass
	p := l.props(t, "MainPID", "ActiveState", "NRestarts")
	if p["MainPID"] != pid || p["ActiveState"] != "active" {
		t.Errorf("after the reload: %v, want active, MainPID %s (re-executed in place)", p, pid)
	}
	t1 := now()
	l.write(t, localDir+"/"+tag+".json", `{"reload": 1}`)
	r := l.waitRun(t, t1, "/"+tag+".json", true, 10*time.Second)
	if r == nil {
		t.Fatalf("no run after the change (runs: %v)", l.runs(t))
	}
	if r.tag != tag {
		t.Errorf("the change ran the command %q, want the new %q", r.tag, tag)
	}
	for _, x := range l.runs(t) {
		if x.start > t0 && x.tag != tag {
			t.Errorf("the old command ran after the reload: %+v", x)
		}
	}
}

// ---------------------------------------------------------------- the lab

type lab struct {
	dir    string // lab.sh's state; dir/root is the container's / seen from here
	script string
}

// requireLab skips (fails, with REQUIRE_SYSTEMD_LAB=1) unless a lab can run.
func requireLab(t *testing.T) {
	require := os.Getenv("REQUIRE_SYSTEMD_LAB") == "1"
	if !require && os.Getenv("SYSTEMD_LAB") != "1" {
		t.Skip("boots a systemd container: set SYSTEMD_LAB=1, or REQUIRE_SYSTEMD_LAB=1 as make systemd-test does")
	}
	skip := t.Skipf
	if require {
		skip = t.Fatalf
	}
	if testing.Short() {
		skip("-short")
	}
	if os.Geteuid() != 0 {
		skip("needs root")
	}
	if out, err := exec.Command("./lab.sh", "check").CombinedOutput(); err != nil {
		skip("systemd-nspawn cannot run here: %s", strings.TrimSpace(string(out)))
	}
}

// boot installs the agent into a seed tree as `make install` does for an
// image, enables the unit, adds the test's config and command, and boots
// a lab from it. Cleanup takes it down (and lab.sh's guard does, should
// this process die first).
func boot(t *testing.T) *lab {
	script, err := filepath.Abs("lab.sh")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	seed := t.TempDir()
	install := exec.Command("make", "-C", "../..", "install", "DESTDIR="+seed, "PREFIX=/usr/local", "BIN="+t.TempDir())
	// A static binary runs in the container whatever the host's libc.
	install.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for name, data := range map[string]string{
		"etc/os-collect-config.conf":       config("v1"),
		"usr/local/bin/occ-test-hook":      hookScript,
		"var/lib/occ-test/local/boot.json": `{"boot": true}`,
	} {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "hook") {
			mode = 0o755
		}
		mustWrite(t, filepath.Join(seed, name), data, mode)
	}
	// What `systemctl enable` does.
	wants := filepath.Join(seed, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/local/lib/systemd/system/"+unit, filepath.Join(wants, unit)); err != nil {
		t.Fatal(err)
	}
	built := time.Now()

	dir, err := os.MkdirTemp("", "occlab")
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{dir: dir, script: script}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := l.exec(20*time.Second, "", "sh", "-c",
				"systemctl status --no-pager -l -n 0 "+unit+"; journalctl --no-pager -o short-precise -n 150 -u "+unit)
			t.Logf("at the end:\n%s", out)
		}
		down := exec.Command(script, "down", dir)
		out, err := down.CombinedOutput()
		t.Logf("lab.sh down: %s", strings.TrimSpace(string(out)))
		if err != nil {
			t.Errorf("lab.sh down: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a first debootstrap
	defer cancel()
	up := exec.CommandContext(ctx, script, "up", dir, seed)
	up.Env = append(os.Environ(), fmt.Sprintf("LAB_OWNER_PID=%d", os.Getpid()))
	up.Cancel = func() error { return up.Process.Signal(syscall.SIGTERM) } // lab.sh cleans up
	up.WaitDelay = time.Minute
	out, err := up.CombinedOutput()
	t.Logf("make install %.1fs; lab.sh up %.1fs:\n%s", built.Sub(start).Seconds(), time.Since(built).Seconds(),
		strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("lab.sh up: %v", err)
	}
	return l
}

// exec runs a command in the container with stdin, within timeout; the
// output is stdout, or stdout and stderr on failure.
func (l *lab) exec(timeout time.Duration, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.script, append([]string{"exec", l.dir}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so a timeout kills nsenter's child too
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %s)", err, timeout)
		}
		return stdout.String() + stderr.String(), fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// sh runs a shell command in the container; failing is fatal.
func (l *lab) sh(t *testing.T, script string) string {
	t.Helper()
	out, err := l.exec(60*time.Second, "", "sh", "-c", script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// write replaces a file in the container as a writer on the node would:
// a hidden temporary file (the local collector skips those), renamed.
func (l *lab) write(t *testing.T, path, data string) {
	t.Helper()
	out, err := l.exec(10*time.Second, data, "sh", "-c",
		`set -e; umask 022; mkdir -p "${1%/*}"; t="${1%/*}/.${1##*/}.tmp"; cat >"$t"; mv -f "$t" "$1"`, "sh", path)
	if err != nil {
		t.Fatalf("writing %s: %v\n%s", path, err, out)
	}
}

// props reads unit properties.
func (l *lab) props(t *testing.T, names ...string) map[string]string {
	t.Helper()
	args := []string{"systemctl", "show", unit}
	for _, n := range names {
		args = append(args, "-p", n)
	}
	out, err := l.exec(10*time.Second, "", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			p[k] = v
		}
	}
	return p
}

func (l *lab) prop(t *testing.T, name string) string { t.Helper(); return l.props(t, name)[name] }

// ensureActive starts the unit if an earlier step left it stopped.
func (l *lab) ensureActive(t *testing.T) {
	t.Helper()
	if l.prop(t, "ActiveState") != "active" {
		t.Log("the unit is not active; starting it")
		l.sh(t, "systemctl reset-failed "+unit+" 2>/dev/null; systemctl start "+unit)
	}
}

// lastPass is the time of the daemon's last pass, from its status line.
func (l *lab) lastPass(t *testing.T) float64 {
	t.Helper()
	st := l.prop(t, "StatusText")
	m := regexp.MustCompile(`^last pass (\S+):`).FindStringSubmatch(st)
	if m == nil {
		t.Fatalf("StatusText = %q", st)
	}
	ts, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		t.Fatal(err)
	}
	return float64(ts.Unix())
}

// journal returns the unit's journal entries since a time (seconds since
// the epoch; the container shares the host's clock).
func (l *lab) journal(t *testing.T, since float64) []map[string]any {
	t.Helper()
	out, err := l.exec(20*time.Second, "", "journalctl", "-u", unit, "-o", "json", "--no-pager", "-q",
		fmt.Sprintf("--since=@%.6f", since))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var entries []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("journal line %q: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	return entries
}

// run is one run of the hook, from runsLog.
type run struct {
	tag        string
	pid        int
	start, end float64
	files      string // OS_CONFIG_FILES
	ended      bool
	exit       int
	term       bool // got SIGTERM
}

func (l *lab) runs(t *testing.T) []*run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(l.dir, "root", runsLog))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var runs []*run
	byPID := map[int]*run{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[2])
		ts, _ := strconv.ParseFloat(f[3], 64)
		r := byPID[pid]
		if f[0] == "start" {
			r = &run{tag: f[1], pid: pid, start: ts}
			if len(f) > 4 {
				r.files = f[4]
			}
			byPID[pid] = r
			runs = append(runs, r)
			continue
		}
		if r == nil {
			continue
		}
		switch f[0] {
		case "end":
			r.end, r.ended = ts, true
			if len(f) > 4 {
				r.exit, _ = strconv.Atoi(f[4])
			}
		case "term":
			r.end, r.ended, r.term, r.exit = ts, true, true, 143
		}
	}
	return runs
}

// findRun is the first run started after since with a cache file whose
// path contains file in OS_CONFIG_FILES.
func (l *lab) findRun(t *testing.T, since float64, file string) *run {
	t.Helper()
	for _, r := range l.runs(t) {
		if r.start >= since && strings.Contains(r.files, file) {
			return r
		}
	}
	return nil
}

// waitRun waits for findRun (and for the run to end, with ended).
func (l *lab) waitRun(t *testing.T, since float64, file string, ended bool, timeout time.Duration) *run {
	t.Helper()
	var r *run
	waitFor(t, timeout, fmt.Sprintf("a run with %s", file), func() bool {
		r = l.findRun(t, since, file)
		return r != nil && (r.ended || !ended)
	})
	return r
}

func (r *run) String() string {
	return fmt.Sprintf("{%s pid %d %.3f-%.3f exit %d term %v %s}", r.tag, r.pid, r.start, r.end, r.exit, r.term, r.files)
}

// ---------------------------------------------------------------- helpers

func now() float64 { return float64(time.Now().UnixNano()) / 1e9 }

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("timed out after %s waiting for %s", timeout, what)
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
	return true
}

func mustWrite(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// str is a journal field as a string (journalctl gives non-UTF-8 values
// as arrays of bytes).
func str(e map[string]any, k string) string {
	switch v := e[k].(type) {
	case string:
		return v
	case []any:
		b := make([]byte, 0, len(v))
		for _, x := range v {
			if f, ok := x.(float64); ok {
				b = append(b, byte(f))
			}
		}
		return string(b)
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// realtime is an entry's time in seconds since the epoch.
func realtime(e map[string]any) float64 {
	us, _ := strconv.ParseFloat(str(e, "__REALTIME_TIMESTAMP"), 64)
	return us / 1e6
}

func find(entries []map[string]any, match func(map[string]any) bool) map[string]any {
	for _, e := range entries {
		if match(e) {
			return e
		}
	}
	return nil
}

// cacheKey is the key whose cache file in OS_CONFIG_FILES contains file.
func cacheKey(files, file string) string {
	for _, f := range strings.Split(files, ":") {
		if strings.Contains(f, file) {
			return strings.TrimSuffix(filepath.Base(f), ".json")
		}
	}
	return ""
}
