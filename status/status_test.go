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
	p := agentstate.Pass{Version: 1, Started: t0, Ended: t0.Add(2 * time.Second), Converged: converged,
		Collectors: []agentstate.Collector{{Name: "heat", Result: "ok", Changed: true, Polled: t0},
			{Name: "ec2", Result: "unavailable", Reason: "connection refused", Polled: t0}},
		Command: &agentstate.Command{Command: "os-refresh-config", Started: t0, Seconds: 1.5, Exit: exit}}
	if err := agentstate.Write(filepath.Join(n.statusDir, agentstate.PassFile), p); err != nil {
		n.t.Fatal(err)
	}
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

// The exit status says whether all is well: no pass yet, healthy,
// degraded by the pass or by the latest deployment of a name (a later
// one of the same name supersedes a failure).
func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(n *node)
		health string
		exit   int
	}{
		{"no pass since boot", func(n *node) {}, "no-pass", NoPass},
		{"converged", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0, ok("0")) }, "healthy", Healthy},
		{"command failed", func(n *node) { n.pass(false, 1) }, "degraded", Degraded},
		{"a deployment failed", func(n *node) { n.pass(true, 0); n.deployment("a", "one", t0, ok("3")) }, "degraded", Degraded},
		{"its signal failed", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "one", t0, &agentstate.Signal{Version: 1, StatusCode: "0", Transport: "HEAT_SIGNAL", Result: "failed", NotifyExit: 1})
		}, "degraded", Degraded},
		{"a failure superseded", func(n *node) {
			n.pass(true, 0)
			n.deployment("a", "one", t0, ok("3"))
			n.deployment("b", "one", t0.Add(time.Minute), ok("0"))
		}, "healthy", Healthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			tc.setup(n)
			if got := n.run(); got != tc.exit || !strings.HasPrefix(n.stdout.String(), "status: "+tc.health+"\n") {
				t.Errorf("exit %d, want %d; output:\n%s", got, tc.exit, n.stdout.String())
			}
			n.run("--format", "json")
			var rep Report
			if err := json.Unmarshal([]byte(n.stdout.String()), &rep); err != nil || rep.Health != tc.health || rep.Version != 1 {
				t.Errorf("json %v: %s", err, n.stdout.String())
			}
		})
	}
}

// The text names every collector, the command and each deployment in
// the order they started.
func TestText(t *testing.T) {
	n := newNode(t)
	n.pass(true, 0)
	n.deployment("b-id", "second", t0.Add(time.Second), nil)
	n.deployment("a-id", "first", t0, ok("0"))
	n.run()
	want := "status: healthy\n" +
		"last pass: ended 2026-11-25T10:00:02Z (58s ago), converged\n" +
		"  collector heat       ok, changed\n" +
		"  collector ec2        unavailable: connection refused\n" +
		"  command os-refresh-config: exit 0 after 1.5s, at 2026-11-25T10:00:00Z\n" +
		"deployments:\n" +
		"  a-id first [script] status 0, CFN_SIGNAL sent at 2026-11-25T10:00:00Z\n" +
		"  b-id second [script] running or not signalled\n"
	if n.stdout.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", n.stdout.String(), want)
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
