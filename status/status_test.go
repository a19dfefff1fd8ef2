package status

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

type node struct {
	t                   *testing.T
	statusDir, deployed string
	stdout, stderr      strings.Builder
}

func newNode(t *testing.T) *node {
	d := t.TempDir()
	n := &node{t: t, statusDir: filepath.Join(d, "run"), deployed: filepath.Join(d, "deployed")}
	os.MkdirAll(n.statusDir, 0o755)
	os.MkdirAll(n.deployed, 0o700)
	return n
}

func (n *node) pass(converged bool, exit int) {
	n.passWith(converged, &agentstate.Command{Command: "os-refresh-config", Started: t0, Seconds: 1.5, Exit: exit},
		agentstate.Collector{Name: "heat", Result: "ok", Changed: true, Polled: t0},
		agentstate.Collector{Name: "ec2", Result: "not-configured", Polled: t0})
}

// passWith leaves the record of a pass (started at t0, 2 s long) whose
// collectors had those results.
func (n *node) passWith(converged bool, cmd *agentstate.Command, cs ...agentstate.Collector) {
	p := agentstate.Pass{Version: 1, Started: t0, Ended: t0.Add(2 * time.Second), Converged: converged, Collectors: cs, Command: cmd}
	if err := agentstate.Write(filepath.Join(n.statusDir, agentstate.PassFile), p); err != nil {
		n.t.Fatal(err)
	}
}

// stopped leaves the record os-collect-config writes when it stops on
// its configuration: the last pass's (from passWith, or none) with the
// stop beside it, as JSON, the way a reader older than the stop sees it.
func (n *node) stopped(err string) {
	path := filepath.Join(n.statusDir, agentstate.PassFile)
	rec := map[string]any{"version": 1, "started": time.Time{}, "ended": time.Time{}, "collectors": nil, "converged": false}
	if data, rerr := os.ReadFile(path); rerr == nil {
		rec = map[string]any{}
		json.Unmarshal(data, &rec)
	}
	rec["stopped"] = map[string]any{"at": t0.Add(5 * time.Second), "cause": "configuration", "error": err, "exit": 1}
	if werr := agentstate.Write(path, rec); werr != nil {
		n.t.Fatal(werr)
	}
}

const unknownLocalHeat = "Unknown collectors ['local,heat']. Valid collectors are: ['heat_local', 'ec2', 'cfn', 'heat', 'request', 'local', 'zaqar']. " +
	`The collectors option takes one name per line: instead of 'local,heat' write "collectors = local" and "collectors = heat", each on a line of its own (on the command line: local heat)`

func src(name, result, reason string) agentstate.Collector {
	return agentstate.Collector{Name: name, Result: result, Reason: reason, Polled: t0}
}

// deployment leaves what 55-heat-config leaves: the state file, and the
// signal record once signalled.
func (n *node) deployment(id, name string, at time.Time, sig *agentstate.Signal) {
	path := filepath.Join(n.deployed, id+".json")
	os.WriteFile(path, []byte(`{"id": "`+id+`", "name": "`+name+`", "group": "script", "inputs": []}`), 0o600)
	os.Chtimes(path, at, at)
	if sig != nil {
		agentstate.Write(filepath.Join(n.deployed, id+".signal.json"), sig)
	}
}

func (n *node) run(args ...string) int {
	n.stdout.Reset()
	n.stderr.Reset()
	env := Env{Stdout: &n.stdout, Stderr: &n.stderr, Now: func() time.Time { return t0.Add(time.Minute) }, Poll: 10 * time.Millisecond,
		Environ: []string{agentstate.DirVar + "=" + n.statusDir, "HEAT_CONFIG_DEPLOYED=" + n.deployed}}
	return exitcode.Of(Run(context.Background(), args, env))
}

func ok(code string) *agentstate.Signal {
	return &agentstate.Signal{Version: 1, At: t0, StatusCode: code, Transport: "CFN_SIGNAL", Result: "sent"}
}

// The exit status says whether all is well, and the problems say why
// not: healthy only when every configured source answered, the command
// succeeded and the latest deployment of each name (a later one of the
// same name supersedes a failure) succeeded and was signalled.
func TestHealth(t *testing.T) {
	heat := src("heat", "ok", "")
	for _, tc := range []struct {
		name     string
		setup    func(n *node)
		health   string
		exit     int
		problems []string
	}{
		{"no pass since boot", func(n *node) {}, "no-pass", NoPass, nil},
		{"converged", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0, ok("0")) }, "healthy", Healthy, nil},
		{"nothing new", func(n *node) { n.passWith(true, nil, heat, src("zaqar", "not-configured", "")) }, "healthy", Healthy, nil},
		{"command failed", func(n *node) { n.pass(false, 1) }, "degraded", Degraded, []string{"command os-refresh-config: exited 1"}},
		{"command killed", func(n *node) { n.pass(false, -9) }, "degraded", Degraded, []string{"command os-refresh-config: killed by signal 9"}},
		{"pass cut short", func(n *node) { n.passWith(false, nil, heat) }, "degraded", Degraded,
			[]string{"pass: did not finish (see journalctl -u os-collect-config)"}},
		{"a source unavailable", func(n *node) {
			n.passWith(true, nil, heat, src("ec2", "unavailable", "connection refused"))
		}, "degraded", Degraded, []string{"source ec2: unavailable: connection refused"}},
		{"a source refused for its size", func(n *node) {
			n.passWith(true, nil, src("request", "unavailable", "body over max-metadata-bytes (67108864)"), heat)
		}, "degraded", Degraded, []string{"source request: unavailable: body over max-metadata-bytes (67108864)"}},
		{"a source kept a bad file's last data", func(n *node) {
			n.passWith(true, nil, heat, src("local", "degraded", "/var/lib/os-collect-config/local-data/a.json is not valid JSON; kept its last good data"))
		}, "degraded", Degraded, []string{"source local: degraded: /var/lib/os-collect-config/local-data/a.json is not valid JSON; kept its last good data"}},
		{"the only source degraded answered", func(n *node) {
			n.passWith(true, nil, src("local", "degraded", "a.json is not valid JSON; kept the last committed data"))
		}, "degraded", Degraded, []string{"source local: degraded: a.json is not valid JSON; kept the last committed data"}},
		{"every source unavailable", func(n *node) {
			n.passWith(true, nil, src("heat", "unavailable", "timed out"), src("ec2", "not-configured", ""))
		}, "degraded", Degraded, []string{"source heat: unavailable: timed out", "pass: no source answered"}},
		{"no source configured", func(n *node) {
			n.passWith(true, nil, src("heat", "not-configured", ""), src("local", "not-configured", ""))
		}, "degraded", Degraded, []string{"pass: no source answered"}},
		{"a deployment failed", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0, ok("3")) }, "degraded", Degraded,
			[]string{"deployment one: status code 3"}},
		{"its signal failed", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "one", t0, &agentstate.Signal{Version: 1, StatusCode: "0", Transport: "HEAT_SIGNAL", Result: "failed", NotifyExit: 1})
		}, "degraded", Degraded, []string{"deployment one: its HEAT_SIGNAL signal failed (heat-config-notify exit 1)"}},
		{"a signal result it does not know", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "", t0, &agentstate.Signal{Version: 1, StatusCode: "0", Transport: "CFN_SIGNAL", Result: "lost-in-transit"})
		}, "degraded", Degraded, []string{"deployment a: its CFN_SIGNAL signal was not sent (lost in transit)"}},
		{"run by the last pass, never signalled", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0.Add(time.Second), nil) }, "degraded", Degraded,
			[]string{"deployment one: not signalled: the pass that ran it ended at 2026-11-25T10:00:02Z"}},
		{"running now", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0.Add(time.Minute), nil) }, "healthy", Healthy, nil},
		{"run before signal records", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0.Add(-time.Hour), nil) }, "healthy", Healthy, nil},
		{"stopped on its configuration before any pass", func(n *node) { n.stopped(unknownLocalHeat) }, "degraded", Degraded,
			[]string{"config: os-collect-config stopped at 2026-11-25T10:00:05Z (exit 1): " + unknownLocalHeat}},
		{"stopped on its configuration after a healthy pass", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "one", t0, ok("0"))
			n.stopped(`invalid value "abc" for option polling-interval (from /etc/os-collect-config.conf): not a number`)
		}, "degraded", Degraded,
			[]string{`config: os-collect-config stopped at 2026-11-25T10:00:05Z (exit 1): invalid value "abc" for option polling-interval (from /etc/os-collect-config.conf): not a number`}},
		{"a deployment failed, no pass since boot", func(n *node) { n.deployment("a", "one", t0.Add(-time.Hour), ok("127")) }, "no-pass", NoPass,
			[]string{"deployment one: status code 127"}},
		{"a deployment failed, stopped before any pass", func(n *node) {
			n.deployment("a", "one", t0.Add(-time.Hour), ok("127"))
			n.stopped(unknownLocalHeat)
		}, "degraded", Degraded,
			[]string{"config: os-collect-config stopped at 2026-11-25T10:00:05Z (exit 1): " + unknownLocalHeat, "deployment one: status code 127"}},
		{"a failure superseded", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "one", t0, ok("3"))
			n.deployment("b", "one", t0.Add(time.Minute), ok("0"))
		}, "healthy", Healthy, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			tc.setup(n)
			want := "status: " + tc.health + "\n"
			for _, p := range tc.problems {
				want += "reason: " + p + "\n"
			}
			if got := n.run(); got != tc.exit || !strings.HasPrefix(n.stdout.String(), want) {
				t.Errorf("exit %d, want %d; output:\n%s\nwant it to start:\n%s", got, tc.exit, n.stdout.String(), want)
			}
			n.run("--format", "json")
			var rep Report
			if err := json.Unmarshal([]byte(n.stdout.String()), &rep); err != nil || rep.Health != tc.health || rep.Version != 2 || len(rep.Problems) != len(tc.problems) {
				t.Fatalf("json %v: %s", err, n.stdout.String())
			}
			for i, p := range rep.Problems {
				if p.String() != tc.problems[i] {
					t.Errorf("problem %d: %q, want %q", i, p, tc.problems[i])
				}
			}
		})
	}
}

// A v1 record, as an agent before status v2 wrote it, still reads.
func TestReadsV1Records(t *testing.T) {
	n := newNode(t)
	os.WriteFile(filepath.Join(n.statusDir, agentstate.PassFile), []byte(`{"version": 1, "started": "2026-11-25T10:00:00Z",
 "ended": "2026-11-25T10:00:02Z", "collectors": [{"name": "heat", "result": "ok", "changed": false, "polled": "2026-11-25T10:00:00Z"}],
 "converged": true}`), 0o600)
	n.deployment("a", "one", t0.Add(-time.Hour), nil)
	os.WriteFile(filepath.Join(n.deployed, "a.signal.json"), []byte(`{"version": 1, "at": "2026-11-25T09:00:00Z", "status_code": "0",
 "transport": "NO_SIGNAL", "result": "sent", "notify_exit": 0}`), 0o600)
	if got := n.run("--format", "json"); got != Healthy {
		t.Errorf("exit %d:\n%s", got, n.stdout.String())
	}
}

// The text names every collector, the command and each deployment in
// the order they started.
func TestText(t *testing.T) {
	n := newNode(t)
	n.pass(true, 0)
	n.deployment("b-id", "second", t0.Add(5*time.Second), nil)
	n.deployment("a-id", "first", t0, ok("0"))
	n.run()
	want := "status: healthy\n" +
		"last pass: ended 2026-11-25T10:00:02Z (58s ago), converged\n" +
		"  collector heat       ok, changed\n" +
		"  collector ec2        not-configured\n" +
		"  command os-refresh-config: exit 0 after 1.5s, at 2026-11-25T10:00:00Z\n" +
		"deployments:\n" +
		"  a-id first [script] status 0, CFN_SIGNAL sent at 2026-11-25T10:00:00Z\n" +
		"  b-id second [script] running\n"
	if n.stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", n.stdout.String(), want)
	}
}

// The text tells why os-collect-config stopped, and flags each failed
// deployment, even before any pass (the node: a configuration
// that stopped the daemon at start-up, deployments that failed with 127
// before it).
func TestTextStopped(t *testing.T) {
	n := newNode(t)
	n.deployment("a-id", "first", t0.Add(-time.Hour), ok("127"))
	n.deployment("b-id", "second", t0.Add(-time.Hour+time.Second), ok("0"))
	n.stopped(unknownLocalHeat)
	if got := n.run(); got != Degraded {
		t.Errorf("exit %d, want %d", got, Degraded)
	}
	want := "status: degraded\n" +
		"reason: config: os-collect-config stopped at 2026-11-25T10:00:05Z (exit 1): " + unknownLocalHeat + "\n" +
		"reason: deployment first: status code 127\n" +
		"last pass: none since boot\n" +
		"deployments:\n" +
		"  a-id first [script] status 127 (failed), CFN_SIGNAL sent at 2026-11-25T10:00:00Z\n" +
		"  b-id second [script] status 0, CFN_SIGNAL sent at 2026-11-25T10:00:00Z\n"
	if n.stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", n.stdout.String(), want)
	}
	n.run("--format", "json")
	var rep struct {
		Health  string
		Pass    *struct{ Ended time.Time }
		Stopped *struct {
			Error string
			Exit  int
		}
		Deployments []struct{ ID, Outcome, Problem string }
	}
	if err := json.Unmarshal([]byte(n.stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Health != "degraded" || rep.Pass != nil || rep.Stopped == nil || rep.Stopped.Error != unknownLocalHeat || rep.Stopped.Exit != 1 ||
		len(rep.Deployments) != 2 || rep.Deployments[0].Outcome != "failed" || rep.Deployments[0].Problem != "status code 127" ||
		rep.Deployments[1].Outcome != "succeeded" || rep.Deployments[1].Problem != "" {
		t.Errorf("json:\n%s", n.stdout.String())
	}
}

// A stop after a healthy pass keeps that pass in view; the next pass
// replaces the record, and the node is healthy again.
func TestStopKeepsTheLastPass(t *testing.T) {
	n := newNode(t)
	n.pass(true, 0)
	n.stopped(`invalid value "abc" for option polling-interval (from /etc/os-collect-config.conf): not a number`)
	n.run()
	if out := n.stdout.String(); !strings.Contains(out, "\nlast pass: ended 2026-11-25T10:00:02Z (58s ago), converged\n  collector heat") {
		t.Errorf("the last pass is not shown:\n%s", out)
	}
	n.run("--format", "json")
	var rep struct{ Pass, Stopped map[string]any }
	if err := json.Unmarshal([]byte(n.stdout.String()), &rep); err != nil || rep.Pass == nil || rep.Pass["stopped"] != nil || rep.Stopped == nil {
		t.Errorf("json (%v):\n%s", err, n.stdout.String())
	}
	n.pass(true, 0)
	if got := n.run(); got != Healthy {
		t.Errorf("after a good pass: exit %d\n%s", got, n.stdout.String())
	}
}

// --wait is over at once when os-collect-config stopped on its
// configuration: no pass comes until someone fixes it.
func TestWaitEndsWhenStopped(t *testing.T) {
	n := newNode(t)
	n.stopped(unknownLocalHeat)
	// An hour's --wait; the context bounds a run that would wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env := Env{Stdout: &n.stdout, Stderr: &n.stderr, Now: func() time.Time { return t0.Add(time.Minute) }, Poll: 10 * time.Millisecond,
		Environ: []string{agentstate.DirVar + "=" + n.statusDir, "HEAT_CONFIG_DEPLOYED=" + n.deployed}}
	if got := exitcode.Of(Run(ctx, []string{"--wait"}, env)); got != Degraded || ctx.Err() != nil {
		t.Errorf("exit %d (context: %v), want %d at once\n%s", got, ctx.Err(), Degraded, n.stdout.String())
	}
}

// --wait returns once a pass has ended, or at its timeout with NoPass.
func TestWait(t *testing.T) {
	n := newNode(t)
	if got := n.run("--wait", "--timeout", "0.05"); got != NoPass {
		t.Errorf("timeout: exit %d", got)
	}
	go func() { time.Sleep(50 * time.Millisecond); n.pass(true, 0) }()
	if got := n.run("--wait", "--timeout", "5"); got != Healthy {
		t.Errorf("exit %d\n%s", got, n.stdout.String())
	}
}

func TestUsage(t *testing.T) {
	n := newNode(t)
	for _, args := range [][]string{{"--format", "yaml"}, {"--timeout", "soon"}, {"--bogus"}} {
		if got := n.run(args...); got != exitcode.Usage {
			t.Errorf("%v: exit %d", args, got)
		}
	}
}
