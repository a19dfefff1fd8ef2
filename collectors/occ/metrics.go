package occ

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/metrics"
)

// metricsState is what the metrics need beyond the pass: the last
// command run (a pass with nothing new runs none), and heat-config's
// deployments, read again after each pass.
type metricsState struct {
	lastCommand *agentstate.Command
	seeded      bool
	deployments deployed.Reader
	// failing is the last error logged, so that a file that cannot be
	// written warns once, not every pass.
	failing string
}

// seedLastCommand takes the last command from the previous status
// record, once: after a restart the metrics still show the command the
// node last ran.
func (r *runner) seedLastCommand(path string) {
	if r.metrics.seeded {
		return
	}
	r.metrics.seeded = true
	var old agentstate.Pass
	if agentstate.Read(path, &old) == nil && r.metrics.lastCommand == nil {
		r.metrics.lastCommand = old.Command
	}
}

// writeMetrics replaces metrics-file, if set, with the pass's metrics.
// A source's data last changed when its newest cache file was written:
// the cache rewrites a key's file only when its content changed, so this
// holds across restarts. A failure is a warning, once: the metrics must
// not fail the pass.
func (r *runner) writeMetrics(rec *agentstate.Pass) {
	path := r.cfg.MetricsFile
	if path == "" {
		return
	}
	if rec.Command != nil {
		r.metrics.lastCommand = rec.Command
	}
	st := metrics.State{Pass: *rec, Command: r.metrics.lastCommand, LastChange: map[string]time.Time{}}
	for _, c := range rec.Collectors {
		for _, k := range r.lastKeys[c.Name] {
			if fi, err := os.Stat(r.cache.Path(k)); err == nil && fi.ModTime().After(st.LastChange[c.Name]) {
				st.LastChange[c.Name] = fi.ModTime()
			}
		}
	}
	dir := deployed.FromEnv(r.env.Environ, "")
	var problem string
	ds, err := r.metrics.deployments.Read(dir)
	if err != nil {
		problem = fmt.Sprintf("Could not read the deployments for the metrics file %s: %v", path, err)
	}
	st.Deployments = ds
	agentstate.RemoveStaged(path) // a killed pass's, in node_exporter's directory
	if err := metrics.WriteFile(path, metrics.Families(st)); err != nil {
		// The cause alone: the staged file's name changes every time.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		problem = fmt.Sprintf("Could not write the metrics file %s: %v", path, err)
	}
	if problem != "" && problem != r.metrics.failing {
		r.log.Warn(problem)
	}
	r.metrics.failing = problem
}
