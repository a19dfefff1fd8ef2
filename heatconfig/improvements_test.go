package heatconfig

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

func signalOf(t *testing.T, n *node, id string) *jsondoc.Object {
	t.Helper()
	s, ok := n.notified()[id]
	if !ok {
		t.Fatalf("%s was not signalled; log:\n%s", id, n.stderr.String())
	}
	return mustParse(t, s).(*jsondoc.Object)
}

func field(o *jsondoc.Object, k string) string { v, _ := o.Get(k); return jsondoc.PyStr(v) }

// A group without a hook is signalled as failed at once, naming the
// group and where its hook was looked for (the reference signalled
// nothing: Heat waited for the stack's timeout). os-apply-config's group
// has no hook on purpose: nothing happens to it here.
func TestNoHookIsSignalledAsFailed(t *testing.T) {
	n := newNode(t)
	n.deployments(dep("a", "Heat::Ungrouped"), dep("b", "os-apply-config"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	sig := signalOf(t, n, "a")
	if field(sig, "deploy_status_code") != "127" || !strings.Contains(field(sig, "deploy_stderr"), `no hook for group "Heat::Ungrouped"`) ||
		!strings.Contains(field(sig, "deploy_stderr"), n.hooks+", "+n.dir+"/root/usr/libexec/heat-config/hooks") {
		t.Errorf("signal %s", jsondoc.Dumps(sig))
	}
	if want := "[ERROR] No hook for group Heat::Ungrouped: no file \"HeatUngrouped\" in " + n.hooks + ", " + n.dir + "/root/usr/libexec/heat-config/hooks, " + n.dir + "/root/var/lib/heat-config/hooks; deployment a fails with status 127\n"; !strings.Contains(n.stderr.String(), want) {
		t.Errorf("log:\n%s\nwant the line %q", n.stderr.String(), want)
	}
	if _, ok := n.notified()["b"]; ok {
		t.Error("the os-apply-config deployment was signalled")
	}
	if _, ok := n.state("b.json"); ok {
		t.Error("the os-apply-config deployment got a state file")
	}
}

// A hook that cannot be executed fails its deployment in the same run
// (the reference logged a traceback and never signalled).
func TestUnexecutableHookIsSignalledAsFailed(t *testing.T) {
	n := newNode(t)
	os.WriteFile(filepath.Join(n.hooks, "h"), []byte("#!/bin/sh\n"), 0o644)
	n.deployments(dep("a", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	sig := signalOf(t, n, "a")
	if field(sig, "deploy_status_code") != "126" || !strings.Contains(field(sig, "deploy_stderr"), "permission denied") {
		t.Errorf("signal %s", jsondoc.Dumps(sig))
	}
}

// A hook past HEAT_CONFIG_HOOK_TIMEOUT is stopped with its process group
// and its deployment fails with status 124.
func TestHookDeadline(t *testing.T) {
	n := newNode(t)
	n.extraEnv = []string{"HEAT_CONFIG_HOOK_TIMEOUT=0.3"}
	n.hook("h", "echo started; sleep 60 & wait\n")
	n.deployments(dep("a", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	sig := signalOf(t, n, "a")
	if field(sig, "deploy_status_code") != "124" || !strings.Contains(field(sig, "deploy_stderr"), "timed out after 300ms") ||
		field(sig, "deploy_stdout") != "started\n" {
		t.Errorf("signal %s", jsondoc.Dumps(sig))
	}
}

// A hook that stops its tool at HEAT_CONFIG_HOOK_TIMEOUT, after the
// tool's grace, reports its own result (124 and its note): 55-heat-config
// waits past the hook's deadline, its grace and a slack before it kills
// the hook. With equal deadlines the kill won the race and the hook's
// note was lost.
func TestHookOwnDeadlineResultWins(t *testing.T) {
	n := newNode(t)
	n.extraEnv = []string{"HEAT_CONFIG_HOOK_TIMEOUT=0.3"}
	// As hooks.RunTool does: the tool runs to the deadline, then takes
	// its grace (the node's, 200 ms) to stop; the hook then writes its
	// result.
	n.hook("h", `sleep 0.45; echo '{"deploy_stdout": "", "deploy_stderr": "tool timed out after 0.3 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped", "deploy_status_code": 124}'`+"\n")
	n.deployments(dep("a", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	sig := signalOf(t, n, "a")
	if field(sig, "deploy_status_code") != "124" || field(sig, "deploy_stderr") != "tool timed out after 0.3 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped" {
		t.Errorf("signal %s", jsondoc.Dumps(sig))
	}
}

// 100 MB on a hook's stdout passes through a bounded buffer: the signal
// keeps the tail, and the run allocates a few MiB, not the output.
func TestHookOutputIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MB")
	}
	n := newNode(t)
	n.hook("h", "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo THE-END\n")
	n.deployments(dep("a", "h"))
	runtime.GC()
	peak := peakHeap(t)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	p := peak()
	t.Logf("live heap peaked at %.1f MiB", float64(p)/(1<<20))
	if p > 12<<20 {
		t.Errorf("the heap peaked at %d MiB for 100 MB of output", p>>20)
	}
	out := field(signalOf(t, n, "a"), "deploy_stdout")
	if !strings.HasSuffix(out, "THE-END\n") || len(out) > 6<<20 || !strings.Contains(out, "bytes dropped") {
		t.Errorf("deploy_stdout of %d bytes, ends %q", len(out), out[max(0, len(out)-20):])
	}
}

// peakHeap samples the live heap until the returned function is called,
// which gives the highest value seen.
func peakHeap(t *testing.T) func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

// Hostile or broken entries are one error line each, naming the entry;
// nothing is written outside the state directory, and the others run.
func TestHostileDeploymentsAreSkipped(t *testing.T) {
	n := newNode(t)
	n.hook("h", echoHook)
	bad := []string{
		`"just a string"`,
		`{"group": "h", "inputs": []}`,
		`{"id": "../escape", "group": "h", "inputs": []}`,
		`{"id": "a/b", "group": "h", "inputs": []}`,
		`{"id": "nul\u0000", "group": "h", "inputs": []}`,
		`{"id": 7, "group": "h", "inputs": []}`,
		`{"id": "nogroup", "inputs": []}`,
		`{"id": "noinputs", "group": "h"}`,
		`{"id": "inputsmap", "name": "named", "group": "h", "inputs": {"a": 1}}`,
		`{"id": "badinput", "group": "h", "inputs": [{"value": 1}]}`,
		`{"id": "` + strings.Repeat("i", 201) + `", "group": "h", "inputs": []}`,
		`{"id": "new\nline", "group": "h", "inputs": []}`,
	}
	n.deployments(append(bad, dep("good", "h"))...)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if got := n.notified(); len(got) != 1 || got["good"] == "" {
		t.Errorf("signalled %v, want only good", got)
	}
	if c := strings.Count(n.stderr.String(), "[ERROR] Skipping deployment "); c != len(bad) {
		t.Errorf("%d error lines for %d bad entries:\n%s", c, len(bad), n.stderr.String())
	}
	for _, want := range []string{`'../escape': invalid deployment: id "../escape" holds a slash`, `"named" ('inputsmap'): invalid deployment: inputs is an object, not a list`,
		`is longer than 200 bytes`, `'new\nline': invalid deployment: id "new\nline" holds a control character`} {
		if !strings.Contains(n.stderr.String(), want) {
			t.Errorf("no %q in:\n%s", want, n.stderr.String())
		}
	}
	entries, _ := os.ReadDir(n.dir)
	for _, e := range entries {
		switch e.Name() {
		case "heat-config", "deployed", "hooks", "notified", "notify", "h.stdin", "order":
		default:
			t.Errorf("unexpected file %s outside the state directory", e.Name())
		}
	}
}

// A deployments file that is not a list is one error line; exit 0.
func TestDeploymentsNotAList(t *testing.T) {
	n := newNode(t)
	os.WriteFile(n.conf, []byte(`{"id": "x"}`), 0o600)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.stderr.String(), "[ERROR] "+n.conf+": invalid deployment: the deployments are an object, not a list\n") {
		t.Errorf("log:\n%s", n.stderr.String())
	}
}

// A component runs the entry for its deploy_action with that entry's
// tool as hook; without one it is skipped (no state, no signal).
func TestComponentGroup(t *testing.T) {
	n := newNode(t)
	n.hook("script", echoHook)
	comp := func(id, action string) string {
		return `{"id": "` + id + `", "group": "component", "config": {"configs": [` +
			`{"actions": ["DELETE"], "config": "del", "tool": "nope"}, {"actions": ["CREATE", "UPDATE"], "config": "make", "tool": "script"}]}, ` +
			`"inputs": [{"name": "deploy_action", "type": "String", "value": "` + action + `"}]}`
	}
	n.deployments(comp("c1", "CREATE"), comp("c2", "SUSPEND"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	stdin, _ := os.ReadFile(filepath.Join(n.dir, "script.stdin"))
	d := mustParse(t, string(stdin)).(*jsondoc.Object)
	if field(d, "group") != "script" || field(d, "config") != "make" {
		t.Errorf("the hook got %s", stdin)
	}
	if _, ok := n.state("c2.json"); ok || len(n.notified()) != 1 {
		t.Errorf("c2 ran: %v", n.notified())
	}
	if !strings.Contains(n.stderr.String(), "[WARNING] Skipping group component, no valid script is defined for deploy action SUSPEND\n") {
		t.Errorf("log:\n%s", n.stderr.String())
	}
}

// Credentials never reach the log, debug included, even when a hook
// echoes them.
func TestNoSecretsInTheLog(t *testing.T) {
	n := newNode(t)
	n.hook("h", `cat; cat "$NODE/heat-config" >&2; exit 1`)
	n.deployments(`{"id": "s", "group": "h", "inputs": [` +
		`{"name": "deploy_password", "type": "String", "value": "pa55-w0rd-xyz"}, ` +
		`{"name": "deploy_signal_id", "type": "String", "value": "http://127.0.0.1:8000/v1/signal/arn?Timestamp=1&Signature=SiGnAtUrE%2B"}]}`)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	log := n.stderr.String()
	for _, secret := range []string{"pa55-w0rd-xyz", "SiGnAtUrE"} {
		if strings.Contains(log, secret) {
			t.Errorf("%s in the log:\n%s", secret, log)
		}
	}
	if !strings.Contains(log, "***") {
		t.Errorf("the hook's output was not logged:\n%s", log)
	}
}

// Under journald each entry of a deployment carries its id, name and
// group, the hook's output is an entry per line, and the last entry
// carries the status signalled.
func TestJournalFieldsPerDeployment(t *testing.T) {
	n := newNode(t)
	var mu sync.Mutex
	var entries []map[string]string
	n.journal = func(msg string, _ journal.Priority, vars map[string]string) error {
		mu.Lock()
		defer mu.Unlock()
		vars["MESSAGE"] = msg
		entries = append(entries, vars)
		return nil
	}
	n.hook("h", `printf '{"deploy_stdout": "line one\\nline two", "deploy_status_code": 4}'`)
	n.deployments(dep("j", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	var lines, status int
	for _, e := range entries {
		if e["DEPLOYMENT_ID"] != "j" || e["DEPLOYMENT_NAME"] != "name-j" || e["DEPLOYMENT_GROUP"] != "h" {
			t.Errorf("entry without the deployment's fields: %v", e)
		}
		if strings.Contains(e["MESSAGE"], "line one") || strings.Contains(e["MESSAGE"], "line two") {
			lines++
			if strings.Contains(e["MESSAGE"], "\n") {
				t.Errorf("a multi-line entry: %q", e["MESSAGE"])
			}
		}
		if e["DEPLOYMENT_STATUS_CODE"] == "4" {
			status++
		}
	}
	if lines != 2 || status != 1 {
		t.Errorf("%d output entries (want 2), %d with the status (want 1): %v", lines, status, entries)
	}
}

// Two runs at once (the daemon's and an operator's) run a deployment
// once.
func TestConcurrentRunsRunADeploymentOnce(t *testing.T) {
	n := newNode(t)
	n.hook("h", `sleep 0.2; echo x >> "$NODE/runs"`)
	n.deployments(dep("a", "h"), dep("b", "h"), dep("c", "h"))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := n.env()
			env.Stderr = &strings.Builder{} // each run its own log
			if err := Run(t.Context(), nil, env); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if runs, _ := os.ReadFile(filepath.Join(n.dir, "runs")); string(runs) != "x\nx\nx\n" {
		t.Errorf("hooks ran %d times for 3 deployments", strings.Count(string(runs), "x"))
	}
}

// Two runs at once take turns on the state directory's lock: run B
// waits while run A holds it, so B's sweep of what killed runs staged
// cannot remove the file A is staging; once A is done, B goes on (and
// would sweep a file A left, A being gone).
func TestConcurrentRunWaitsAndSparesStagedFiles(t *testing.T) {
	n := newNode(t)
	n.hook("h", "true")
	n.deployments(dep("a", "h"))
	os.MkdirAll(n.deployed, 0o700)
	lockA, err := deployed.Dir(n.deployed).Lock(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(n.deployed, ".b.json.123") // A, between its write and its link
	os.WriteFile(staged, []byte("{"), 0o600)
	ran := func() bool { _, ok := n.state("a.json"); return ok }
	var logB strings.Builder
	done := make(chan error, 1)
	go func() {
		env := n.env()
		env.Stderr = &logB
		done <- Run(t.Context(), nil, env)
	}()
	select {
	case err := <-done:
		t.Fatalf("run B did not wait for A's lock: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("run B removed run A's staged file while A held the lock: %v", err)
	}
	if ran() {
		t.Error("run B ran a deployment while A held the lock")
	}
	lockA.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !ran() || !strings.Contains(logB.String(), "Waiting for another heat-config run") {
		t.Errorf("run B after A: state of a %v, log %q", ran(), logB.String())
	}
}

// Stopped while a hook runs (systemctl stop): the hook's group gets
// SIGTERM, the deployment is signalled failed at once, within the stop's
// grace (the reference left Heat waiting for the stack's timeout), the
// next deployments do not start, and the run says it was stopped.
func TestStopSignalsTheRunningDeploymentAsFailed(t *testing.T) {
	n := newNode(t)
	// The trap is set before the test is told the hook started: a
	// TERM in between would kill the shell before its handler exists.
	n.hook("h", `trap 'echo stopped >&2; exit 143' TERM; touch "$NODE/started"; sleep 30 & wait`)
	n.deployments(dep("a", "h"), dep("b", "h"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(n.dir, "started")); err == nil {
				cancel()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	err := Run(ctx, nil, n.env())
	if exitcode.Of(err) != exitcode.Terminated {
		t.Errorf("exit %d, want %d", exitcode.Of(err), exitcode.Terminated)
	}
	sig := signalOf(t, n, "a")
	// The shell may first report its killed sleep ("Terminated"): the
	// trap's own line must end the captured stderr.
	if field(sig, "deploy_status_code") != "143" || !strings.HasSuffix(field(sig, "deploy_stderr"), "stopped\n") {
		t.Errorf("signal %s", jsondoc.Dumps(sig))
	}
	if _, ok := n.state("b.json"); ok {
		t.Error("the next deployment started after the stop")
	}
	// Its budget fits in the grace before SIGKILL (deadline.StopNotify).
	if b, _ := os.ReadFile(filepath.Join(n.calls, "0.retry")); string(b) != "4" {
		t.Errorf("the signal sent when stopped had %s=%q, want 4", deadline.NotifyRetryVar, b)
	}
}
