package torture

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

// scenario is a run of the programs on a node that a fault interrupts,
// and what must hold after the fault and after the run that follows it.
// The same scenario is driven by kills and by cuts.
type scenario interface {
	// setup lays the node out as it was before the run; the harness then
	// makes it durable and starts every trial from it.
	setup(t *testing.T, n *node)
	// start starts the run.
	start(n *node, out io.Writer) *lazyfs.Running
	// learn records the node as a run to its end leaves it (the first
	// run, before any trial).
	learn(t *testing.T, n *node)
	// reset forgets what the last trial left outside the node (the runs
	// of a command, the signals a server got).
	reset()
	// afterFault says what is wrong on the node as the fault left it;
	// completed: the run had ended, successfully, before the fault.
	afterFault(n *node, completed bool) []string
	// rerun runs again to completion, as the next pass after a restart.
	rerun(n *node) error
	// afterRerun says what is wrong after it.
	afterRerun(n *node) []string
}

// result is what the trials of one scenario and fault found.
type result struct {
	trials, completed int
	took              time.Duration
	problems          []string
}

// count reads a number of trials from an environment variable.
func count(t *testing.T, name string, def int) int {
	if testing.Short() {
		t.Skip("fault trials take a while")
	}
	if s := os.Getenv(name); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q", name, s)
		}
		return n
	}
	return def
}

// faultAt is the instant of trial i of n within span: a random one in
// the i-th of n equal slices of it. Stratified, a few trials still land
// all over the run (its start, its middle, its end, and after it: the
// last slice of 1.2 times a run) where random instants may bunch up.
func faultAt(i, n int, span time.Duration) time.Duration {
	slice := int64(span) / int64(max(n, 1))
	return time.Duration(int64(i)*slice + rand.Int64N(slice+1))
}

// runTrials sets the scenario up on n, learns how long a run takes, then
// runs trials: each from the same durable state, interrupted by f at a
// random instant of up to 1.2 times a run (see faultAt), then run again.
func runTrials(t *testing.T, n *node, sc scenario, f fault, trials int) result {
	t.Helper()
	sc.setup(t, n)
	n.fs.Sync()
	base := n.fs.Image()
	var out bytes.Buffer
	var duration time.Duration
	// Twice: the first run also pays for cold caches.
	for i := range 2 {
		if err := n.fs.Restart(base); err != nil {
			t.Fatal(err)
		}
		sc.reset()
		t0 := time.Now()
		if err := sc.start(n, &out).Wait(); err != nil {
			t.Fatalf("a run without a fault: %v\n%s", err, out.String())
		}
		duration = time.Since(t0)
		if i == 1 {
			sc.learn(t, n)
		}
	}

	res := result{trials: trials}
	start := time.Now()
	for i := range trials {
		if err := n.fs.Restart(base); err != nil {
			t.Fatal(err)
		}
		sc.reset()
		out.Reset()
		delay := faultAt(i, trials, duration*6/5)
		r := sc.start(n, &out)
		completed := false
		select {
		case <-r.Done():
			completed = r.Wait() == nil
		case <-time.After(delay):
		}
		n.interrupt(r, f)
		var problems []string
		problems = append(problems, sc.afterFault(n, completed)...)
		if err := sc.rerun(n); err != nil {
			problems = append(problems, "the run after the "+string(f)+": "+err.Error())
		} else {
			problems = append(problems, sc.afterRerun(n)...)
		}
		for _, p := range problems {
			res.problems = append(res.problems, fmt.Sprintf("trial %d (%s after %v%s): %s", i, f, delay.Round(time.Millisecond), map[bool]string{true: ", run complete"}[completed], p))
		}
		if completed {
			res.completed++
		}
	}
	res.took = time.Since(start)
	return res
}

// report fails the test with the problems found and logs the figures.
func report(t *testing.T, name string, f fault, res result) {
	t.Helper()
	for i, p := range res.problems {
		if i == 20 {
			t.Errorf("... and %d more", len(res.problems)-20)
			break
		}
		t.Error(p)
	}
	t.Logf("TORTURE %s: %d %ss (%d after the run had ended) in %v; problems: %d",
		name, res.trials, f, res.completed, res.took.Round(time.Millisecond), len(res.problems))
}

// The quick mode's trials (make test; make torture sets TORTURE_KILLS
// and TORTURE_CUTS to 400 a case). Budget: the package in about 90 s on
// two idle cores, within .ci/run's 30 minutes (issue 33). Every case
// still meets both faults several times, spread over its whole run by
// faultAt (the start, the middle, the end, after it), so every path the
// long mode takes is reached; the long mode is what finds the rare
// instants. quickFaults is a scenario's kills and cuts each.
const (
	quickFaults       = 6  // chain, os-collect-config, 55-heat-config
	quickExample      = 6  // os-apply-config, the bundled example
	quickCorpusCuts   = 4  // os-apply-config, the 1000-template corpus (2 s a trial)
	quickCorpusKills  = 16 // TestKillApplyConfig, a case
	quickWeakenedCuts = 12 // TestWeakenedBuildIsCaught: some 3 problems a cut
)

// faultTrials runs a scenario's trials under kills and under cuts, each
// on a node of its own, and reports them; summary says what else the
// scenario saw. TORTURE_KILLS and TORTURE_CUTS set the trials (quick:
// quickFaults each).
func faultTrials[S scenario](t *testing.T, name string, newScenario func(*testing.T, *node) S, summary func(S) string) {
	kills, cuts := count(t, "TORTURE_KILLS", quickFaults), count(t, "TORTURE_CUTS", quickFaults)
	agent := installed(t, "")
	for _, c := range []struct {
		f      fault
		trials int
	}{{kill, kills}, {cut, cuts}} {
		t.Run(string(c.f), func(t *testing.T) {
			n := newNode(t, agent)
			s := newScenario(t, n)
			report(t, name, c.f, runTrials(t, n, s, c.f, c.trials))
			t.Logf("TORTURE %s %s: %s", name, c.f, summary(s))
		})
	}
}

// committed tells whether every key's .last in got is the one a run to
// its end left (want): the pass committed.
func committed(got, want map[string]entry) bool {
	for rel, w := range want {
		if strings.HasSuffix(rel, ".last") {
			if g, ok := got[rel]; !ok || !same(g, w) {
				return false
			}
		}
	}
	return true
}
