package deployed

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Deployments are the deployments of the state directory: each <id>.json
// with its <id>.signal.json, in the order they started. A missing
// directory is no deployment; state files are read only for their name
// and group (their inputs, credentials among them, go nowhere).
func (d Dir) Deployments() ([]agentstate.Deployment, error) {
	var r Reader
	return r.Read(d)
}

// Reader reads deployments as Dir.Deployments does, for a daemon that
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
func (r *Reader) Read(dir Dir) ([]agentstate.Deployment, error) {
	entries, err := os.ReadDir(string(dir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	seen := make(map[string]memo, len(entries))
	out := []agentstate.Deployment{}
	for _, e := range entries {
		id, ok := stateID(e.Name())
		if !ok {
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

func (r *Reader) readDeployment(dir Dir, id string) (agentstate.Deployment, memo) {
	st := agentstate.Deployment{ID: id}
	path := dir.State(id)
	var m memo
	if fi, err := os.Stat(path); err == nil {
		st.Started = fi.ModTime()
		m = memo{size: fi.Size(), mtime: fi.ModTime()}
	}
	if old, ok := r.memo[id]; ok && old.size == m.size && old.mtime.Equal(m.mtime) && !m.mtime.IsZero() {
		m = old
	} else if data, err := os.ReadFile(path); err == nil {
		// An empty state file (heat-config-rebuild-deployed's) has no name.
		if v, err := jsondoc.Loads(data); err == nil {
			if obj, ok := v.(*jsondoc.Object); ok {
				m.name, m.group = str(obj, "name"), str(obj, "group")
			}
		}
	}
	st.Name, st.Group = m.name, m.group
	var sig agentstate.Signal
	if err := agentstate.Read(dir.Signal(id), &sig); err == nil {
		st.Signal = &sig
	}
	return st, m
}

func str(obj *jsondoc.Object, key string) string {
	v, _ := obj.Get(key)
	s, _ := v.(string)
	return s
}

// stateID is the id whose state file name is, if it is one: not another
// record's .json, nor a staged file.
func stateID(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, StateSuffix)
	if !ok || strings.HasSuffix(name, NotifySuffix) || strings.HasSuffix(name, SignalSuffix) || strings.HasPrefix(id, ".") {
		return "", false
	}
	return id, true
}
