package torture

import (
	"encoding/json"
	"fmt"
	"github.com/tripleo-go/agent/test/torture/lazyfs"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// signals counts, per deployment id, the signals Heat would get (the
// TempURL PUTs of heat-config-notify).
type signals struct {
	mu  sync.Mutex
	got map[string]int
}

func (s *signals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.got[strings.TrimPrefix(r.URL.Path, "/signal/")]++
	s.mu.Unlock()
}

func (s *signals) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.got {
		out[k] = v
	}
	return out
}

// heatScenario is 55-heat-config running ten script deployments (each
// records its run outside the node and takes a moment), each signalled
// by heat-config-notify to an httptest server, on a node where none has
// run yet (the state directory does not exist either).
type heatScenario struct {
	sink        *signals
	srv         *httptest.Server
	ids         []string
	runs        string // host directory: one file per deployment, a line per run
	interrupted int    // trials that left a deployment in flight
	resent      int    // signals sent twice (a fault while one was in flight)
}

const deployedDir = "var/lib/heat-config/deployed"

func newHeatScenario(t *testing.T, n *node, count int) *heatScenario {
	s := &heatScenario{sink: &signals{got: map[string]int{}}, runs: t.TempDir()}
	s.srv = httptest.NewServer(s.sink)
	t.Cleanup(s.srv.Close)
	n.bind(s.runs, "srv/runs", true)
	var items []map[string]any
	for i := range count {
		id := fmt.Sprintf("d%02d", i)
		s.ids = append(s.ids, id)
		items = append(items, map[string]any{
			"id": id, "name": "deployment-" + id, "group": "script", "outputs": []any{}, "options": nil,
			"config": "#!/bin/sh\necho run >> /srv/runs/" + id + "\nsleep 0.02\necho done\n",
			"inputs": []any{
				map[string]any{"name": "deploy_signal_id", "type": "String", "value": s.srv.URL + "/signal/" + id},
				map[string]any{"name": "deploy_signal_verb", "type": "String", "value": "PUT"},
				map[string]any{"name": "deploy_signal_transport", "type": "String", "value": "TEMP_URL_SIGNAL"},
			},
		})
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

func (s *heatScenario) reset() {
	s.sink.mu.Lock()
	s.sink.got = map[string]int{}
	s.sink.mu.Unlock()
	os.RemoveAll(s.runs)
	os.Mkdir(s.runs, 0o755)
}

func (s *heatScenario) afterFault(n *node, completed bool) []string {
	if m, _ := filepath.Glob(n.path(deployedDir + "/*.inflight")); len(m) > 0 {
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
	got := s.sink.snapshot()
	for _, id := range s.ids {
		b, _ := os.ReadFile(filepath.Join(s.runs, id))
		if r := strings.Count(string(b), "run"); r > 1 {
			problems = append(problems, fmt.Sprintf("%s ran %d times", id, r))
		}
		if got[id] == 0 {
			problems = append(problems, id+" was never signalled")
		}
		if got[id] > 1 {
			s.resent++
		}
	}
	if m, _ := filepath.Glob(n.path(deployedDir + "/*.inflight")); len(m) > 0 {
		problems = append(problems, fmt.Sprintf("in-flight markers left after a complete run: %v", m))
	}
	return append(problems, stateFiles(n, false)...)
}

// stateFiles: every file of the state directory is a state file, its
// signal data or its signal record, and parses; or, right after a fault
// (staged), a file staged for one of the last two.
func stateFiles(n *node, staged bool) []string {
	var problems []string
	entries, _ := os.ReadDir(n.path(deployedDir))
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".inflight") || staged && stagedState.MatchString(name) {
			continue
		}
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			problems = append(problems, "unexpected file in the state directory: "+name)
			continue
		}
		b, err := os.ReadFile(n.path(deployedDir + "/" + name))
		var v any
		if err == nil {
			err = json.Unmarshal(b, &v)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s does not parse (%d bytes): %v", name, len(b), err))
		}
	}
	return problems
}

var stagedState = regexp.MustCompile(`^\.[^/]+\.(notify|signal)\.json\.[0-9]+$`)

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestFaultHeatConfig kills 55-heat-config (its hooks and
// heat-config-notify with it), and cuts the power, at random instants of
// a run of ten script deployments, then runs it again. Every deployment
// must have run at most once and been signalled; a run that had exited 0
// keeps its state files after a cut. TORTURE_KILLS and TORTURE_CUTS set
// the trials (quick: 25 each).
func TestFaultHeatConfig(t *testing.T) {
	kills, cuts := count(t, "TORTURE_KILLS", 25), count(t, "TORTURE_CUTS", 25)
	agent := installed(t, "")
	for _, c := range []struct {
		f      fault
		trials int
	}{{kill, kills}, {cut, cuts}} {
		t.Run(string(c.f), func(t *testing.T) {
			n := newNode(t, agent)
			s := newHeatScenario(t, n, 10)
			res := runTrials(t, n, s, c.f, c.trials)
			report(t, "55-heat-config", c.f, res)
			t.Logf("TORTURE 55-heat-config %s: %d cut a deployment short (all signalled on the next run, none ran twice); %d signals sent twice (a fault while one was in flight)",
				c.f, s.interrupted, s.resent)
		})
	}
}
