package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployed"
)

// What the whole-chain tests (deploy_test.go) drive: a node running the
// installed agent as the os-collect-config daemon, stacks whose
// deployments it runs, and what Heat made of its signals.

// Paths of the agent's state on a node (its real defaults).
const (
	occConf        = "/etc/os-collect-config.conf"
	deployedDir    = deployed.DefaultDir
	oacSignalled   = "/var/lib/os-apply-config-deployments/deployed" // 99-refresh-completed's markers
	scriptRuns     = "/var/lib/e2e-node/script.runs"                 // written by the script deployment
	puppetRuns     = "/var/lib/e2e-node/puppet.runs"                 // written by the puppet deployment
	pollInterval   = "1"                                             // seconds (os-collect-config --polling-interval)
	daemonDeadline = 10 * time.Minute
)

// Agent is the installed os-collect-config daemon on a node.
type Agent struct {
	*Daemon
	in    Installed
	start time.Time
}

// newNode makes a node's directory under the lab's, kept when the test
// fails (the agent's log and state, for a look) and removed otherwise.
func newNode(t *testing.T, name string) Node {
	t.Helper()
	dir := filepath.Join(lab.Dir, "nodes", name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		scanNode(t, dir)
		if t.Failed() {
			t.Logf("node %s kept: %s (agent log: agent.log; its files: upper/)", name, dir)
			return
		}
		os.RemoveAll(dir)
	})
	return Node{Dir: dir}
}

// scanNode fails the test for every secret of the lab in what the agent
// logged on the node (with --debug) and in every file it wrote there
// that is not private.
func scanNode(t *testing.T, dir string) {
	t.Helper()
	hits := labSecrets.ScanLog(filepath.Join(dir, "agent.log"))
	hits = append(hits, labSecrets.ScanTree(filepath.Join(dir, "upper"), nil)...)
	for _, h := range hits {
		t.Errorf("secret leaked: %s", h)
	}
}

// bootstrap gives the node the configuration a DeployedServer's operator
// would: os-collect-config.conf from the server's os-collect-config
// metadata, with os-refresh-config as the command. The installed tree
// keeps it as it is, as the package does (make install lays out no
// template of it; images built with the os-collect-config element do).
func bootstrap(t *testing.T, n Node, st *Stack) {
	t.Helper()
	conf, err := os.ReadFile(st.ConfPath)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(conf), "[DEFAULT]\n", "[DEFAULT]\ncommand = os-refresh-config\n", 1)
	if err := n.WriteFile(occConf, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startAgent starts os-collect-config in its normal polling mode, with
// --debug: its "Executing", "No changes detected." and "Sleeping" lines
// tell what each pass did.
func startAgent(t *testing.T, n Node, in Installed) *Agent {
	t.Helper()
	start := time.Now()
	d, err := StartDaemon(n, in.Environ(), filepath.Join(n.Dir, "agent.log"), daemonDeadline,
		"os-collect-config", "--config-file", occConf, "--polling-interval", pollInterval, "--debug")
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Daemon: d, in: in, start: start}
	t.Cleanup(func() { a.Stop(t) })
	return a
}

// stopGrace is how long os-collect-config may take to stop on SIGTERM:
// it gives its command 10 s between SIGTERM and SIGKILL.
const stopGrace = 30 * time.Second

// Stop stops the daemon with SIGTERM and fails the test if it needed
// SIGKILL or left processes behind. Stopping twice is harmless.
func (a *Agent) Stop(t *testing.T) {
	t.Helper()
	if a.Exited() {
		return
	}
	s := a.Daemon.Stop(stopGrace)
	t.Logf("os-collect-config stopped in %s (%v)", s.Took.Round(10*time.Millisecond), s.Err)
	if s.Killed {
		t.Errorf("os-collect-config was still running %s after SIGTERM: killed\n%s", stopGrace, a.tail(30))
	}
	if len(s.Left) > 0 {
		t.Errorf("processes left on the node after os-collect-config stopped (killed): %v", s.Left)
	}
}

// idlePasses counts the os-collect-config passes since its last command run
// that found nothing new.
func idlePasses(lines []Line) int {
	n := 0
	for _, l := range lines {
		switch {
		case strings.Contains(l.Text, "Executing os-refresh-config"):
			n = 0
		case strings.Contains(l.Text, "No changes detected."):
			n++
		}
	}
	return n
}

// waitIdle waits until two passes in a row found nothing new.
func (a *Agent) waitIdle(t *testing.T) {
	t.Helper()
	if err := a.WaitFor(2*time.Minute, "two idle passes", func(l []Line) bool { return idlePasses(l) >= 2 }); err != nil {
		t.Fatalf("%v\n%s", err, a.tail(40))
	}
}

// hooksDir is where the installed tree keeps the hooks.
func (a *Agent) hooksDir() string {
	return filepath.Join(a.in.Dir, "usr/libexec/heat-config/hooks")
}

// hookRuns are the hooks 55-heat-config ran since a time: each from its
// "Running <hook> < <state file>" line to its "Completed <hook>" (or
// "Error running <hook>") line.
func (a *Agent) hookRuns(since time.Time) (runs []string, total time.Duration) {
	hooks := a.hooksDir() + "/"
	lines := a.Lines()
	for i, l := range lines {
		_, rest, ok := strings.Cut(l.Text, "] Running "+hooks)
		if !ok || l.At.Before(since) {
			continue
		}
		group, _, _ := strings.Cut(rest, " ")
		end := l
		for _, m := range lines[i+1:] {
			if strings.HasSuffix(m.Text, "Completed "+hooks+group) || strings.Contains(m.Text, "Error running "+hooks+group) {
				end = m
				break
			}
		}
		took := when(end).Sub(when(l))
		runs = append(runs, fmt.Sprintf("%s %.2fs", group, took.Seconds()))
		total += took
	}
	return runs, total
}

var (
	signalStart = regexp.MustCompile(`\) \[DEBUG\] Signall?ing to `)
	signalEnd   = regexp.MustCompile(`\) \[DEBUG\] (Response <Response|Posted the signal)`)
)

// signalRequests is the time heat-config-notify and 99-refresh-completed
// spent on their signals since a time: from each "Signaling to" line to
// its "Response <Response [...]>" (or "Posted the signal") line, which
// includes a Keystone token for HEAT_SIGNAL and ZAQAR_SIGNAL.
func (a *Agent) signalRequests(since time.Time) time.Duration {
	var total time.Duration
	var started time.Time
	for _, l := range a.Lines() {
		switch {
		case l.At.Before(since):
		case signalStart.MatchString(l.Text):
			started = when(l)
		case signalEnd.MatchString(l.Text) && !started.IsZero():
			total += when(l).Sub(started)
			started = time.Time{}
		}
	}
	return total
}

var pyStamp = regexp.MustCompile(`\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \(`)

// when is the time of a line's event: its last "[2026-11-25 02:54:05,623]
// (program)" stamp, the program's own (55-heat-config relays what
// heat-config-notify logged once it has ended), else when it arrived.
func when(l Line) time.Time {
	if m := pyStamp.FindAllStringSubmatch(l.Text, -1); m != nil {
		if t, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[len(m)-1][1], time.Local); err == nil {
			return t
		}
	}
	return l.At
}

func (a *Agent) tail(n int) string {
	lines := a.Lines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s %s\n", stamp(l.At), l.Text)
	}
	return b.String()
}

// NodeState is what the agent keeps on the node, to compare.
type NodeState struct {
	Deployed   []string // ids with a state file in deployedDir
	Signalled  []string // os-apply-config deployments 99-refresh-completed signalled
	ScriptRuns []string // a line per run of the script deployment: action greeting round
	PuppetRuns int
}

func (n Node) State() NodeState {
	var s NodeState
	ents, _ := os.ReadDir(n.Path(deployedDir))
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasSuffix(id, ".notify") && !strings.HasSuffix(id, ".signal") {
			s.Deployed = append(s.Deployed, id)
		}
	}
	ents, _ = os.ReadDir(n.Path(oacSignalled))
	for _, e := range ents {
		s.Signalled = append(s.Signalled, e.Name())
	}
	if b, err := os.ReadFile(n.Path(scriptRuns)); err == nil {
		s.ScriptRuns = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if b, err := os.ReadFile(n.Path(puppetRuns)); err == nil {
		s.PuppetRuns = strings.Count(string(b), "\n")
	}
	sort.Strings(s.Deployed)
	sort.Strings(s.Signalled)
	return s
}

// ids maps each deployment name of the stack's metadata to its id.
func ids(st *Stack) map[string]string {
	m := map[string]string{}
	deployments, _ := st.Metadata["deployments"].([]any)
	for _, d := range deployments {
		dm, _ := d.(map[string]any)
		name, _ := dm["name"].(string)
		id, _ := dm["id"].(string)
		m[name] = id
	}
	return m
}

// newIDs are the ids in after that are not in before.
func newIDs(before, after []string) []string {
	var out []string
	for _, id := range after {
		if !contains(before, id) {
			out = append(out, id)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Outcome is what lab/stack wait prints: the stack and its deployment
// resources once it is no longer IN_PROGRESS.
type Outcome struct {
	Status, Reason string
	Outputs        map[string]any
	Resources      map[string]struct {
		Status, Reason string
		// what the deployment's attributes resolve to: deploy_stdout,
		// deploy_stderr, deploy_status_code, its outputs
		OutputValues map[string]any `json:"output_values"`
	}
	SeenAt float64 `json:"seen_at"`
	// CompletedAt: when each deployment resource completed or failed
	// (Heat's events, whole seconds; --overcloud stacks only).
	CompletedAt map[string]float64 `json:"completed_at"`
}

func (o *Outcome) seen() time.Time { return time.Unix(0, int64(o.SeenAt*1e9)) }

// waitStack waits (bounded) until the stack is no longer IN_PROGRESS.
func waitStack(ctx context.Context, name string, timeout time.Duration) (*Outcome, error) {
	secs := strconv.Itoa(int(timeout.Seconds()))
	out, err := lab.Script(ctx, timeout+time.Minute, nil, "stack", "wait", name, "--timeout", secs)
	if err != nil {
		return nil, err
	}
	var o Outcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		return nil, fmt.Errorf("stack wait: %w: %s", err, out)
	}
	return &o, nil
}
