package agentstate

import "time"

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

// Latest is the latest deployment of each name (of each id when it has
// none), in start order: a stack update that fixed a failed deployment
// supersedes it. ds must be in start order, as the state directory's reader (heatconfig/deployed) gives.
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
