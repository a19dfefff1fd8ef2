package status

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/pyjson"
)

// Report is what --format json prints (docs/status.md): add fields,
// never rename or remove one.
type Report struct {
	Version int `json:"version"`
	// Health is "healthy", "degraded" or "no-pass".
	Health      string            `json:"health"`
	Pass        *agentstate.Pass  `json:"pass"`
	Deployments []DeploymentState `json:"deployments"`
}

// DeploymentState is one deployment heat-config ran.
type DeploymentState struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Group string `json:"group"`
	// Started is when heat-config claimed it (its state file's time).
	Started time.Time `json:"started"`
	// Signal is nil while it runs, or when it ran before the agent kept
	// signal records.
	Signal *agentstate.Signal `json:"signal"`
}

// failed: its status code is not success, or its signal did not go.
func (d DeploymentState) failed() bool {
	return d.Signal != nil && (d.Signal.StatusCode != "0" || d.Signal.Result == "failed")
}

// gather reads the records. Missing records are not errors: a node that
// has not polled yet has none.
func gather(p paths) (*Report, error) {
	rep := &Report{Version: agentstate.SchemaVersion, Deployments: []DeploymentState{}}
	var pass agentstate.Pass
	switch err := agentstate.Read(filepath.Join(p.statusDir, agentstate.PassFile), &pass); {
	case err == nil:
		rep.Pass = &pass
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	entries, err := os.ReadDir(p.deployed)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.HasSuffix(id, ".notify") || strings.HasSuffix(id, ".signal") {
			continue
		}
		rep.Deployments = append(rep.Deployments, deploymentState(p.deployed, id))
	}
	sort.SliceStable(rep.Deployments, func(i, j int) bool { return rep.Deployments[i].Started.Before(rep.Deployments[j].Started) })
	rep.Health = health(rep)
	return rep, nil
}

func deploymentState(dir, id string) DeploymentState {
	st := DeploymentState{ID: id}
	path := filepath.Join(dir, id+".json")
	if fi, err := os.Stat(path); err == nil {
		st.Started = fi.ModTime()
	}
	// An empty state file (heat-config-rebuild-deployed's) has no name.
	if data, err := os.ReadFile(path); err == nil {
		if v, err := pyjson.Loads(data); err == nil {
			if obj, ok := v.(*pyjson.Object); ok {
				st.Name, st.Group = str(obj, "name"), str(obj, "group")
			}
		}
	}
	var sig agentstate.Signal
	if err := agentstate.Read(filepath.Join(dir, id+".signal.json"), &sig); err == nil {
		st.Signal = &sig
	}
	return st
}

func str(obj *pyjson.Object, key string) string {
	v, _ := obj.Get(key)
	s, _ := v.(string)
	return s
}

func health(rep *Report) string {
	if rep.Pass == nil {
		return "no-pass"
	}
	if !rep.Pass.Converged {
		return "degraded"
	}
	// Only the latest deployment of each name counts: a stack update that
	// fixed a failed one supersedes it (deployments are in start order).
	latest := map[string]DeploymentState{}
	for _, d := range rep.Deployments {
		key := d.Name
		if key == "" {
			key = d.ID
		}
		latest[key] = d
	}
	for _, d := range latest {
		if d.failed() {
			return "degraded"
		}
	}
	return "healthy"
}
