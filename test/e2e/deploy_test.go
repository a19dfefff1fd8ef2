package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// pair is a server's metadata transport with its deployments' signal
// transport.
type pair struct{ name, transport, signal string }

var pairs = []pair{
	{"cfn", PollServerCFN, CFNSignal},
	{"heat", PollServerHeat, HeatSignal},
	{"temp-url", PollTempURL, TempURLSignal},
	{"zaqar", ZaqarMessage, ZaqarSignal},
}

// The deployment resources of a stack made with --puppet (lab/py/stack.py).
const (
	scriptResource     = "deployment"            // group script, e2e-deployment
	puppetResource     = "puppet_deployment"     // group puppet, e2e-puppet
	structuredResource = "structured_deployment" // group os-apply-config, e2e-structured
)

// stackTimeout bounds each wait for a stack to leave IN_PROGRESS.
const stackTimeout = 4 * time.Minute

// TestDeploy is issue 11's proof, per transport pair: the agent installed
// by make install, run as the os-collect-config daemon on a node
// bootstrapped like a DeployedServer, takes a stack with a script, a
// puppet and a signalled os-apply-config deployment to CREATE_COMPLETE,
// each signal through the pair's own transport; re-runs only the
// deployment a stack update changed; re-runs nothing after a restart;
// stops on SIGTERM in the middle of its first run; and fails a stack
// whose script exits 3 with that status and the script's stderr in Heat.
func TestDeploy(t *testing.T) {
	needLab(t)
	// Beside TestImage and TestImageRPM, after the tests that count the
	// lab's requests (TestCollect, TestPush, TestFleet), which run alone.
	t.Parallel()
	in := install(t)
	// The pairs share nothing but the lab (each its own stacks, nodes
	// and agents; Signals are read per stack), so they run side by side;
	// the secrets scan waits for all of them.
	// The update step measures the own share (the TARGET lines): it runs
	// while no other step of TestDeploy does, so that the other pairs'
	// hooks, agents and stacks take no CPU from it (the four updates came
	// within 6 s of one another, with Heat busy with all four).
	var quiet sync.RWMutex
	step := func(t *testing.T, name string, f func(*testing.T)) bool {
		if name == "update" {
			quiet.Lock()
			defer quiet.Unlock()
		} else {
			quiet.RLock()
			defer quiet.RUnlock()
		}
		return t.Run(name, f)
	}
	t.Run("pairs", func(t *testing.T) {
		for _, p := range pairs {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				d := &deploy{t: t, p: p, in: in, name: "e2e-deploy-" + p.name}
				if !step(t, "create", d.create) {
					return
				}
				if step(t, "update", d.update) {
					step(t, "restart", d.restart)
				}
				d.agent.Stop(t)
				step(t, "sigterm", d.sigterm)
				step(t, "fail", d.fail)
			})
		}
	})
	t.Run("secrets", labFileSecrets)
}

// labFileSecrets: the lab's own files for the stacks (each server's
// metadata and os-collect-config.conf) are private. (Every node's agent
// log and files are scanned when the node goes: scanNode.) The
// services' logs are scanned for the record only: what Heat, Swift or
// Keystone log of the requests they serve is theirs, not the agent's.
func labFileSecrets(t *testing.T) {
	for _, h := range labSecrets.ScanTree(filepath.Join(lab.Dir, "stacks"), nil) {
		t.Errorf("secret leaked: %s", h)
	}
	logs, _ := filepath.Glob(filepath.Join(lab.Dir, "log", "*"))
	perFile := map[string]int{}
	for _, f := range logs {
		for _, h := range labSecrets.Find(f) {
			perFile[filepath.Base(f)+" ("+kindOf(h.What)+")"]++
		}
	}
	t.Logf("SECRETS in the services' own logs (not the agent's; for the record): %v", perFile)
	t.Logf("SECRETS so far: %s", labSecrets.Summary())
}

// deploy is one pair's stack and node across the steps.
type deploy struct {
	t     *testing.T
	p     pair
	in    Installed
	name  string
	st    *Stack
	node  Node
	agent *Agent
}

// create: CREATE_COMPLETE with both script outputs, the puppet output,
// and one accepted signal per deployment, the os-apply-config one
// included (99-refresh-completed), through the pair's signal transport
// and no other.
func (d *deploy) create(t *testing.T) {
	d.st = d.stack(t, "create", d.name, "--replace", "--transport", d.p.transport, "--signal", d.p.signal,
		"--structured-signal", d.p.signal, "--puppet", "--greeting", "hello")
	created := time.Now()
	mark := lab.Mark()
	// the node and its agent live on through update and restart
	d.node = newNode(d.t, d.name)
	bootstrap(t, d.node, d.st)
	d.agent = startAgent(d.t, d.node, d.in)

	o := d.wait(t, d.agent, d.name, "CREATE_COMPLETE")
	wantOutputs(t, o, map[string]string{"result": "hello from the agent", "round": "round 1", "puppet_result": "puppet says hi hello"})
	sigs := mark.Signals(d.st)
	d.wantSignals(t, sigs, scriptResource, puppetResource, structuredResource)

	id := ids(d.st)
	s := d.node.State()
	if !sameSet(s.Deployed, []string{id["e2e-deployment"], id["e2e-puppet"]}) {
		t.Errorf("deployed state files for %v, want the script's and puppet's (%v)", s.Deployed, id)
	}
	if !sameSet(s.Signalled, []string{id["e2e-structured"]}) {
		t.Errorf("99-refresh-completed's markers: %v, want the os-apply-config deployment's %s", s.Signalled, id["e2e-structured"])
	}
	if len(s.ScriptRuns) != 1 || s.PuppetRuns != 1 {
		t.Errorf("runs: script %q, puppet %d; want one each", s.ScriptRuns, s.PuppetRuns)
	}
	d.latency(t, created, o, sigs)
	d.logShares(t, "create", d.agent.start)
}

// latency logs, greppably, how long the stack took from `stack create`
// returning (its metadata was in place) to CREATE_COMPLETE, and the
// agent's own share of it: from its start (the metadata was there
// already) to the last of its signals being accepted (the services' own
// log times, see Signals), minus the hooks' run time (55-heat-config's
// "Running <hook>" to "Completed <hook>") and minus the signal requests'
// (heat-config-notify's and 99-refresh-completed's "Signaling to" to the
// answer: the services' time, as the agent waits for each answer before
// the next deployment); agent_own also leaves out the first poll's
// round trips (collect). Heat's time after the last signal (for TEMP_URL
// and ZAQAR it polls for signals) and our 0.5 s poll make up the rest.
func (d *deploy) latency(t *testing.T, created time.Time, o *Outcome, sigs []Signal) {
	var last time.Time
	for _, s := range sigs {
		if s.Via == d.p.signal && s.At.After(last) {
			last = s.At
		}
	}
	a := d.agent
	runs, hooks := a.hookRuns(a.start)
	requests := a.signalRequests(a.start)
	share := last.Sub(a.start) - hooks - requests
	// collect: from the start to the first command, the first poll's
	// round trips to Keystone and the metadata's service: the services'
	// time too, so agent_own leaves it out.
	var collect time.Duration
	if l, err := firstAfter(a.Lines(), a.start, "Executing os-refresh-config"); err == nil {
		collect = l.At.Sub(a.start)
	}
	t.Logf("LATENCY pair=%s create_to_complete=%.2fs agent_share=%.2fs agent_own=%.2fs collect=%.2fs hooks=%.2fs signal_requests=%.2fs start_to_last_signal=%.2fs last_signal_to_complete=%.2fs (%s)",
		d.p.name, o.seen().Sub(created).Seconds(), share.Seconds(), (share - collect).Seconds(), collect.Seconds(), hooks.Seconds(), requests.Seconds(),
		last.Sub(a.start).Seconds(), o.seen().Sub(last).Seconds(), strings.Join(runs, ", "))
}

// update: a new input for the script deployment alone re-runs it alone
// (one new state file, the puppet counter unchanged, no new signal of the
// others) and Heat shows its new output. Its signal is the stack user's
// second, its token taken from the node's cache (cachedTokenCheck).
func (d *deploy) update(t *testing.T) {
	before := d.node.State()
	mark := lab.Mark()
	tokens := startCachedTokenCheck(d.node)
	since := time.Now()
	st := d.stack(t, "update", d.name, "--round", "2", "--agent-running")
	o := d.wait(t, d.agent, d.name, "UPDATE_COMPLETE")
	wantOutputs(t, o, map[string]string{"result": "hello from the agent", "round": "round 2", "puppet_result": "puppet says hi hello"})
	d.wantSignals(t, mark.Signals(st), scriptResource)
	tokens.check(t, d.p, d.st, st)
	d.logShares(t, "update", since)

	after := d.node.State()
	if got, want := newIDs(before.Deployed, after.Deployed), ids(st)["e2e-deployment"]; len(got) != 1 || got[0] != want {
		t.Errorf("new state files for %v, want only the script's new id %s", got, want)
	}
	if n := len(after.ScriptRuns); n != 2 || after.ScriptRuns[n-1] != "UPDATE hello 2" {
		t.Errorf("script runs %q, want a second one: UPDATE hello 2", after.ScriptRuns)
	}
	if after.PuppetRuns != before.PuppetRuns || !sameSet(after.Signalled, before.Signalled) {
		t.Errorf("puppet runs %d -> %d, os-apply-config signals %v -> %v: want no change",
			before.PuppetRuns, after.PuppetRuns, before.Signalled, after.Signalled)
	}
	d.st = st
}

// restart: stopped (SIGTERM) once idle and started again on the same
// node, the agent re-runs and re-signals nothing.
func (d *deploy) restart(t *testing.T) {
	d.agent.waitIdle(t)
	d.agent.Stop(t)
	before := d.node.State()
	mark := lab.Mark()
	a := startAgent(t, d.node, d.in)
	a.waitIdle(t)
	a.Stop(t)
	if after := d.node.State(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the node's state changed across the restart:\n before %+v\n after  %+v", before, after)
	}
	if runs, _ := a.hookRuns(a.start); len(runs) > 0 {
		t.Errorf("hooks ran after the restart: %v", runs)
	}
	if sigs := mark.Signals(d.st); len(sigs) > 0 {
		t.Errorf("signals after the restart: %v", sigs)
	}
	if _, err := firstAfter(a.Lines(), a.start, "Executing os-refresh-config"); err == nil {
		t.Logf("note: os-refresh-config ran after the restart (it re-ran nothing)")
	}
}

// sigterm: SIGTERM while a hook runs in the first pass stops the daemon
// (a new node of the same stack: it runs every deployment again; Heat
// ignores the signals of finished deployments).
func (d *deploy) sigterm(t *testing.T) {
	if d.p.transport == ZaqarMessage {
		t.Skip("a second node gets no metadata: the first one popped every ZAQAR_MESSAGE snapshot")
	}
	n := newNode(t, d.name+"-sigterm")
	bootstrap(t, n, d.st)
	a := startAgent(t, n, d.in)
	puppet := "Running " + filepath.Join(d.in.Dir, "usr/libexec/heat-config/hooks/puppet")
	err := a.WaitFor(2*time.Minute, "the puppet hook to start", func(ls []Line) bool {
		_, err := firstAfter(ls, a.start, puppet)
		return err == nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, a.tail(40))
	}
	a.Stop(t)
}

// fail: a stack whose script exits 3 ends CREATE_FAILED with the status
// code in the reason and the script's stderr in deploy_stderr.
func (d *deploy) fail(t *testing.T) {
	name := d.name + "-fail"
	st := d.stack(t, "create", name, "--replace", "--transport", d.p.transport, "--signal", d.p.signal, "--greeting", "fail")
	mark := lab.Mark()
	n := newNode(t, name)
	bootstrap(t, n, st)
	a := startAgent(t, n, d.in)
	o := d.wait(t, a, name, "CREATE_FAILED")
	a.Stop(t)
	if want := "Deployment exited with non-zero status code: 3"; !strings.Contains(o.Reason, want) {
		t.Errorf("status reason %q does not say %q", o.Reason, want)
	}
	attrs := o.Resources[scriptResource].OutputValues
	if want := "e2e: failing on purpose (greeting=fail), exit 3"; !strings.Contains(fmt.Sprint(attrs["deploy_stderr"]), want) {
		t.Errorf("deploy_stderr %q does not hold the script's %q", attrs["deploy_stderr"], want)
	}
	if code := fmt.Sprint(attrs["deploy_status_code"]); code != "3" {
		t.Errorf("deploy_status_code %s, want 3", code)
	}
	d.wantSignals(t, mark.Signals(st), scriptResource)
}

// stack runs lab/stack; the stack is deleted at the end of the pair's
// test (kept, to look at, when it failed and E2E_KEEP=1).
func (d *deploy) stack(t *testing.T, args ...string) *Stack {
	t.Helper()
	t0 := time.Now()
	st, err := lab.stack(context.Background(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack %s %s in %s", args[0], args[1], time.Since(t0).Round(100*time.Millisecond))
	if args[0] == "create" {
		d.t.Cleanup(func() {
			if d.t.Failed() && keepLab() {
				return
			}
			if err := lab.DeleteStack(context.Background(), args[1]); err != nil {
				d.t.Log(err)
			}
		})
	}
	return st
}

func keepLab() bool { return os.Getenv("E2E_KEEP") == "1" }

// wait waits for stack name to leave IN_PROGRESS (while the agent runs)
// and wants status.
func (d *deploy) wait(t *testing.T, a *Agent, name, status string) *Outcome {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-a.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	o, err := waitStack(ctx, name, stackTimeout)
	if err != nil {
		t.Fatalf("%v\nagent (ended: %v):\n%s", err, a.Exited(), a.tail(60))
	}
	if o.Status != status {
		t.Fatalf("stack %s: %s (%s), want %s\nagent:\n%s", name, o.Status, o.Reason, status, a.tail(60))
	}
	return o
}

func wantOutputs(t *testing.T, o *Outcome, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := fmt.Sprint(o.Outputs[k]); got != v {
			t.Errorf("stack output %s = %q, want %q", k, got, v)
		}
	}
}

// wantSignals: each of resources signalled (accepted) through the pair's
// transport, nothing through another, no other resource signalled. (With
// ZAQAR_SIGNAL the deployments also carry Heat API credentials: the
// agent must not use them.)
func (d *deploy) wantSignals(t *testing.T, sigs []Signal, resources ...string) {
	t.Helper()
	t.Logf("signals: %v", sigs)
	for _, r := range resources {
		ok := false
		for _, s := range sigs {
			ok = ok || s.Resource == r && s.Via == d.p.signal && s.Status/100 == 2
		}
		if !ok {
			t.Errorf("no accepted %s for %s", d.p.signal, r)
		}
	}
	for _, s := range sigs {
		switch {
		case s.Via != d.p.signal:
			t.Errorf("signal through the wrong transport (want %s): %v", d.p.signal, s)
		case !contains(resources, s.Resource):
			t.Errorf("unexpected signal: %v", s)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
