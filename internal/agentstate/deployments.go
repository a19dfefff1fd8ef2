package agentstate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// DefaultDeployedDir is heat-config's state directory; DeployedVar (the
// variable 55-heat-config reads) overrides it.
const (
	DefaultDeployedDir = "/var/lib/heat-config/deployed"
	DeployedVar        = "HEAT_CONFIG_DEPLOYED"
)

// Deployment is one deployment heat-config ran, from its state file and
// its signal record.
type Deployment struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Group string `json:"group"`
	// Started is when heat-config claimed it (its state file's time).
	Started time.Time `json:"started"`
	// Signal is nil while it runs, or when it ran before the agent kept
	// signal records.
	Signal *Signal `json:"signal"`
	// Problem says why it keeps the node from being healthy (absent
	// when it does not): status v2.
	Problem string `json:"problem,omitempty"`
}

// Outcomes of a deployment, as counted in the metrics.
const (
	Succeeded   = "succeeded"   // status code 0, signalled
	Failed      = "failed"      // a non-zero status code
	Unsignalled = "unsignalled" // its signal failed or was never sent
	Running     = "running"     // no signal record, started since the last pass ended
	Unknown     = "unknown"     // no signal record, started before the last pass: ran under an agent that kept none
)

// Outcome is what became of d, given the last pass (nil: none yet). A
// failure shows even when its signal failed too. A deployment without a
// signal record is unsignalled when the last pass started it and ended
// without signalling it, running when it started since, and unknown when
// it started before.
func (d Deployment) Outcome(last *Pass) string {
	switch s := d.Signal; {
	case s == nil && last != nil && !d.Started.Before(last.Started) && !d.Started.After(last.Ended):
		return Unsignalled
	case s == nil && (last == nil || d.Started.After(last.Ended)):
		return Running
	case s == nil:
		return Unknown
	case s.StatusCode != "0":
		return Failed
	case s.Result != "sent":
		return Unsignalled
	}
	return Succeeded
}

// ReadDeployments reads heat-config's state directory: each <id>.json
// with its <id>.signal.json, in the order they started. A missing
// directory is no deployment; state files are read only for their name
// and group (their inputs, credentials among them, go nowhere).
func ReadDeployments(dir string) ([]Deployment, error) {
	var r Reader
	return r.Read(dir)
}

// Reader reads deployments as ReadDeployments does, for a daemon that
// reads them after every pass: a state file is parsed again only when
// its size or time changed (they are written once; TripleO's can be
// megabytes), its small signal record every time.
type Reader struct {
	memo map[string]memo
}

type memo struct {
	size        int64
	mtime       time.Time
	name, group string
}

// Read reads dir's deployments.
func (r *Reader) Read(dir string) ([]Deployment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	seen := make(map[string]memo, len(entries))
	out := []Deployment{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasSuffix(id, ".notify") || strings.HasSuffix(id, ".signal") || strings.HasPrefix(id, ".") {
			continue
		}
		d, m := r.readDeployment(dir, id)
		seen[id] = m
		out = append(out, d)
	}
	r.memo = seen
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, nil
}

func (r *Reader) readDeployment(dir, id string) (Deployment, memo) {
	st := Deployment{ID: id}
	path := filepath.Join(dir, id+".json")
	var m memo
	if fi, err := os.Stat(path); err == nil {
		st.Started = fi.ModTime()
		m = memo{size: fi.Size(), mtime: fi.ModTime()}
	}
	if old, ok := r.memo[id]; ok && old.size == m.size && old.mtime.Equal(m.mtime) && !m.mtime.IsZero() {
		m = old
	} else if data, err := os.ReadFile(path); err == nil {
		// An empty state file (heat-config-rebuild-deployed's) has no name.
		if v, err := pyjson.Loads(data); err == nil {
			if obj, ok := v.(*pyjson.Object); ok {
				m.name, m.group = str(obj, "name"), str(obj, "group")
			}
		}
	}
	st.Name, st.Group = m.name, m.group
	var sig Signal
	if err := Read(filepath.Join(dir, id+".signal.json"), &sig); err == nil {
		st.Signal = &sig
	}
	return st, m
}

func str(obj *pyjson.Object, key string) string {
	v, _ := obj.Get(key)
	s, _ := v.(string)
	return s
}

// Latest is the latest deployment of each name (of each id when it has
// none), in start order: a stack update that fixed a failed deployment
// supersedes it. ds must be in start order, as ReadDeployments gives.
func Latest(ds []Deployment) []Deployment {
	last := map[string]int{}
	for i, d := range ds {
		last[key(d)] = i
	}
	var out []Deployment
	for i, d := range ds {
		if last[key(d)] == i {
			out = append(out, d)
		}
	}
	return out
}

func key(d Deployment) string {
	if d.Name == "" {
		return "\x00" + d.ID
	}
	return d.Name
}
