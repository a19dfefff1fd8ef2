package torture

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

const deployedDir = "var/lib/heat-config/deployed"

// deployments is what the trials see, from outside the node, of its
// script deployments: the signals an httptest server got (the TempURL
// PUTs of heat-config-notify), and the runs each deployment's script
// recorded, a line a run, in a host directory bound at /srv/runs.
type deployments struct {
	srv  *httptest.Server
	runs string

	mu        sync.Mutex
	signalled map[string]int
}

func newDeployments(t *testing.T, n *node) *deployments {
	d := &deployments{runs: t.TempDir(), signalled: map[string]int{}}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.signalled[strings.TrimPrefix(r.URL.Path, "/signal/")]++
		d.mu.Unlock()
	}))
	t.Cleanup(d.srv.Close)
	n.bind(d.runs, "srv/runs", true)
	return d
}

// item is deployment id for the script hook: it records its run, takes
// a moment (for faults to land in it) and is signalled to the server.
func (d *deployments) item(id string) map[string]any {
	return map[string]any{
		"id": id, "name": "deployment-" + id, "group": "script", "outputs": []any{}, "options": nil,
		"config": "#!/bin/sh\necho run >> /srv/runs/" + id + "\nsleep 0.02\necho done\n",
		"inputs": []any{
			map[string]any{"name": "deploy_signal_id", "type": "String", "value": d.srv.URL + "/signal/" + id},
			map[string]any{"name": "deploy_signal_verb", "type": "String", "value": "PUT"},
			map[string]any{"name": "deploy_signal_transport", "type": "String", "value": "TEMP_URL_SIGNAL"},
		},
	}
}

// reset forgets the signals and runs of the last trial.
func (d *deployments) reset() {
	d.mu.Lock()
	d.signalled = map[string]int{}
	d.mu.Unlock()
	os.RemoveAll(d.runs)
	os.Mkdir(d.runs, 0o755)
}

// signals is how many signals each deployment got.
func (d *deployments) signals() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.signalled)
}

// ran is how many times deployment id ran.
func (d *deployments) ran(id string) int {
	b, _ := os.ReadFile(filepath.Join(d.runs, id))
	return strings.Count(string(b), "run")
}

// inFlight is the in-flight markers of the node's state directory: a
// deployment whose hook was started and not finished.
func inFlight(n *node) []string {
	m, _ := filepath.Glob(n.path(deployedDir + "/*.inflight"))
	return m
}

// stateFiles: every file of the state directory is a state file, its
// signal data or its signal record, and parses; or, right after a fault
// (staged), a file staged for one of them or for an in-flight marker.
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

var stagedState = regexp.MustCompile(`^\.[^/]+\.(json|inflight)\.[0-9]+$`)

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
