package torture

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

// heatScenario is 55-heat-config running ten script deployments (each
// records its run outside the node and takes a moment), each signalled
// by heat-config-notify to an httptest server, on a node where none has
// run yet (the state directory does not exist either).
type heatScenario struct {
	deps        *deployments
	ids         []string
	interrupted int // trials that left a deployment in flight
	resent      int // signals sent twice (a fault while one was in flight)
}

func newHeatScenario(t *testing.T, n *node, count int) *heatScenario {
	s := &heatScenario{deps: newDeployments(t, n)}
	var items []map[string]any
	for i := range count {
		id := fmt.Sprintf("d%02d", i)
		s.ids = append(s.ids, id)
		items = append(items, s.deps.item(id))
	}
	doc, _ := json.Marshal(items)
	if err := os.WriteFile(n.path("etc/heat-config.json"), doc, 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// env: the deployments list on a durable filesystem (a node's is in
// /run, rendered again by os-apply-config after a boot: the chain
// scenario has that).
func (s *heatScenario) env(n *node) []string {
	return n.env("HEAT_SHELL_CONFIG=/etc/heat-config.json")
}

func (s *heatScenario) setup(t *testing.T, n *node) {}

func (s *heatScenario) start(n *node, out io.Writer) *lazyfs.Running {
	return n.start(out, s.env(n), "/opt/agent/usr/libexec/os-refresh-config/configure.d/55-heat-config")
}

func (s *heatScenario) learn(t *testing.T, n *node) {
	if p := s.check(n); len(p) > 0 {
		t.Fatalf("a run without a fault: %v", p)
	}
}

func (s *heatScenario) reset() { s.deps.reset() }

func (s *heatScenario) afterFault(n *node, completed bool) []string {
	if len(inFlight(n)) > 0 {
		s.interrupted++
	}
	var problems []string
	for _, id := range s.ids {
		if completed && !exists(n.path(deployedDir+"/"+id+".json")) {
			problems = append(problems, "55-heat-config had exited 0, yet "+id+"'s state file is gone")
		}
	}
	return append(problems, stateFiles(n, true)...)
}

func (s *heatScenario) rerun(n *node) error {
	return n.run(s.env(n), "/opt/agent/usr/libexec/os-refresh-config/configure.d/55-heat-config")
}

func (s *heatScenario) afterRerun(n *node) []string { return s.check(n) }

// check: every deployment ran at most once and was signalled; nothing in
// flight; the state directory holds only state files that parse.
func (s *heatScenario) check(n *node) []string {
	var problems []string
	got := s.deps.signals()
	for _, id := range s.ids {
		if r := s.deps.ran(id); r > 1 {
			problems = append(problems, fmt.Sprintf("%s ran %d times", id, r))
		}
		if got[id] == 0 {
			problems = append(problems, id+" was never signalled")
		}
		if got[id] > 1 {
			s.resent++
		}
	}
	if m := inFlight(n); len(m) > 0 {
		problems = append(problems, fmt.Sprintf("in-flight markers left after a complete run: %v", m))
	}
	return append(problems, stateFiles(n, false)...)
}

// TestFaultHeatConfig kills 55-heat-config (its hooks and
// heat-config-notify with it), and cuts the power, at random instants of
// a run of ten script deployments, then runs it again. Every deployment
// must have run at most once and been signalled; a run that had exited 0
// keeps its state files after a cut. TORTURE_KILLS and TORTURE_CUTS set
// the trials (quick: quickFaults each).
func TestFaultHeatConfig(t *testing.T) {
	faultTrials(t, "55-heat-config", func(t *testing.T, n *node) *heatScenario { return newHeatScenario(t, n, 10) },
		func(s *heatScenario) string {
			return fmt.Sprintf("%d cut a deployment short (all signalled on the next run, none ran twice); %d signals sent twice (a fault while one was in flight)",
				s.interrupted, s.resent)
		})
}
