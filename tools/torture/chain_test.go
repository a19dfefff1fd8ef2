package torture

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

// chainScenario is a node's whole chain, as make install lays it out
// (with the os-collect-config element's template, see installed):
// os-collect-config --one-time (local collector) -> os-refresh-config ->
// configure.d/20-os-apply-config (the elements' templates, as in an
// image: the deployments list and os-collect-config.conf) -> configure.d/55-heat-config
// -> the script hook -> heat-config-notify -> an httptest server. Before
// the run, a pass with three deployments converged; the run's metadata
// adds three more and changes os-collect-config's settings.
type chainScenario struct {
	deps        *deployments
	oldIDs      []string
	newIDs      []string
	oldCache    map[string]entry
	wantCache   map[string]entry
	oldEtc      map[string]entry
	wantEtc     map[string]entry
	committed   bool
	interrupted int
}

func newChainScenario(t *testing.T, n *node) *chainScenario {
	s := &chainScenario{deps: newDeployments(t, n)}
	host := t.TempDir()
	for i := range 6 {
		id := fmt.Sprintf("c%02d", i)
		if i < 3 {
			s.oldIDs = append(s.oldIDs, id)
		} else {
			s.newIDs = append(s.newIDs, id)
		}
	}
	write := func(which string, ids []string, interval int) {
		var items []any
		for _, id := range ids {
			items = append(items, s.deps.item(id))
		}
		doc, _ := json.Marshal(map[string]any{
			"deployments":       items,
			"os-collect-config": map[string]any{"polling_interval": interval, "collectors": []string{"local"}},
		})
		os.MkdirAll(filepath.Join(host, which), 0o755)
		if err := os.WriteFile(filepath.Join(host, which, "node.json"), doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("old", s.oldIDs, 30)
	write("new", append(append([]string{}, s.oldIDs...), s.newIDs...), 10)
	n.bind(host, "srv/meta", false)
	return s
}

func (s *chainScenario) args(which string) []string {
	return []string{"os-collect-config", "--config-file", "/dev/null", "--one-time",
		"--cachedir", "/" + cacheDir, "--local-path", "/srv/meta/" + which, "-c", "os-refresh-config", "local"}
}

func (s *chainScenario) setup(t *testing.T, n *node) {
	if err := n.run(n.env(), s.args("old")...); err != nil {
		t.Fatal(err)
	}
	for _, id := range s.oldIDs {
		if s.deps.signals()[id] != 1 {
			t.Fatalf("the first pass did not signal %s: %v", id, s.deps.signals())
		}
	}
	s.oldCache, s.oldEtc = snapshot(t, n.path(cacheDir)), snapshot(t, n.path("etc"))
	s.reset()
}

func (s *chainScenario) start(n *node, out io.Writer) *lazyfs.Running {
	return n.start(out, n.env(), s.args("new")...)
}

func (s *chainScenario) learn(t *testing.T, n *node) {
	s.wantCache, s.wantEtc = snapshot(t, n.path(cacheDir)), snapshot(t, n.path("etc"))
	if p := s.check(n); len(p) > 0 {
		t.Fatalf("a run without a fault: %v", p)
	}
}

func (s *chainScenario) reset() { s.deps.reset() }

func (s *chainScenario) afterFault(n *node, completed bool) []string {
	if len(inFlight(n)) > 0 {
		s.interrupted++
	}
	cache, err := readTree(n.path(cacheDir))
	if err != nil {
		return []string{err.Error()}
	}
	etc, err := readTree(n.path("etc"))
	if err != nil {
		return []string{err.Error()}
	}
	problems := checkCache(n, cache)
	p, _ := oldOrNewCache(cache, s.oldCache, s.wantCache)
	problems = append(problems, p...)
	p, _ = oldOrNew(etc, s.oldEtc, s.wantEtc)
	problems = append(problems, p...)
	s.committed = committed(cache, s.wantCache)
	if completed && !s.committed {
		problems = append(problems, "os-collect-config had exited 0, yet its commit was lost")
	}
	return append(problems, stateFiles(n, true)...)
}

func (s *chainScenario) rerun(n *node) error {
	os.Remove(n.path(agentstate.DefaultDir[1:] + "/" + agentstate.PassFile))
	return n.run(n.env(), s.args("new")...)
}

func (s *chainScenario) afterRerun(n *node) []string {
	var problems []string
	var pass agentstate.Pass
	if err := agentstate.Read(n.path(agentstate.DefaultDir[1:]+"/"+agentstate.PassFile), &pass); err != nil {
		problems = append(problems, "no status record of the pass after the fault: "+err.Error())
	} else if ran := pass.Command != nil; ran && s.committed {
		problems = append(problems, "a committed change ran its command again")
	} else if !ran && !s.committed {
		problems = append(problems, "a change that was not committed did not run its command again")
	}
	return append(problems, s.check(n)...)
}

// check: the new deployments ran at most once and were signalled, the
// old ones did not run again; the cache and /etc are the new ones.
func (s *chainScenario) check(n *node) []string {
	var problems []string
	got := s.deps.signals()
	for _, id := range append(append([]string{}, s.oldIDs...), s.newIDs...) {
		switch r := s.deps.ran(id); {
		case r > 1:
			problems = append(problems, fmt.Sprintf("%s ran %d times", id, r))
		case r > 0 && strings.Compare(id, s.newIDs[0]) < 0:
			problems = append(problems, id+", deployed before, ran again")
		}
	}
	for _, id := range s.newIDs {
		if got[id] == 0 {
			problems = append(problems, id+" was never signalled")
		}
	}
	if m := inFlight(n); len(m) > 0 {
		problems = append(problems, fmt.Sprintf("in-flight markers left after a complete run: %v", m))
	}
	cache, err := readTree(n.path(cacheDir))
	if err != nil {
		return append(problems, err.Error())
	}
	if d := diffTrees(cache, s.wantCache); d != "" {
		problems = append(problems, "the cache: "+d)
	}
	etc, err := readTree(n.path("etc"))
	if err != nil {
		return append(problems, err.Error())
	}
	if d := diffTrees(etc, s.wantEtc); d != "" {
		problems = append(problems, "/etc: "+d)
	}
	return append(problems, stateFiles(n, false)...)
}

// TestFaultChain kills the whole chain (every process at once), and cuts
// the power, at random instants of a pass that brings three new
// deployments, then runs the pass again. TORTURE_KILLS and TORTURE_CUTS
// set the trials (quick: quickFaults each).
func TestFaultChain(t *testing.T) {
	faultTrials(t, "chain", newChainScenario, func(s *chainScenario) string {
		return fmt.Sprintf("%d left a deployment in flight (signalled on the next run, none ran twice)", s.interrupted)
	})
}
