package status

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/agentstate"
)

// ReportVersion is the version of --format json's schema
// (docs/status.md). 2: "healthy" asks every configured source to have
// answered, and each deployment to have been signalled; "problems" and
// each deployment's "problem" say why the node is degraded.
const ReportVersion = 2

// Report is what --format json prints (docs/status.md): add fields,
// never rename or remove one.
type Report struct {
	Version int `json:"version"`
	// Health is "healthy", "degraded" or "no-pass".
	Health string `json:"health"`
	// Problems are the reasons the node is not healthy, in the order of
	// the pipeline: the configuration, sources, the command,
	// deployments. Empty when healthy.
	Problems []Problem `json:"problems"`
	// Pass is os-collect-config's last pass: nil when none has ended
	// since boot.
	Pass *agentstate.Pass `json:"pass"`
	// Stopped says why os-collect-config exited after that pass (or
	// before any) without running another; nil when it did not.
	Stopped     *agentstate.Stop `json:"stopped"`
	Deployments []Deployment     `json:"deployments"`
}

// Deployment is one deployment, as the report shows it.
type Deployment struct {
	agentstate.Deployment
	// Outcome is what became of it (agentstate's outcomes: "failed" for
	// a non-zero status code), judged against the last pass.
	Outcome string `json:"outcome"`
}

// Problem is one reason the node is not healthy.
type Problem struct {
	// Kind is "config", "pass", "source", "command" or "deployment".
	Kind string `json:"kind"`
	// Name is the source's, the command's or the deployment's (its id
	// when it has no name); absent for "config" and "pass".
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Name == "" {
		return p.Kind + ": " + p.Reason
	}
	return p.Kind + " " + p.Name + ": " + p.Reason
}

// gather reads the records. Missing records are not errors: a node that
// has not polled yet has none.
func gather(p paths) (*Report, error) {
	rep := &Report{Version: ReportVersion, Problems: []Problem{}}
	var pass agentstate.Pass
	switch err := agentstate.Read(filepath.Join(p.statusDir, agentstate.PassFile), &pass); {
	case err == nil:
		// A stop is told beside the pass, not inside it; a stop before
		// any pass leaves a record with no pass in it.
		rep.Stopped, pass.Stopped = pass.Stopped, nil
		if pass.HasPass() {
			rep.Pass = &pass
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	ds, err := deployed.Dir(p.deployed).Deployments()
	if err != nil {
		return nil, err
	}
	rep.Deployments = make([]Deployment, len(ds))
	for i, d := range ds {
		rep.Deployments[i] = Deployment{Deployment: d, Outcome: d.Outcome(rep.Pass)}
	}
	judge(rep)
	return rep, nil
}

// judge sets the health and the problems. Healthy: os-collect-config
// did not stop on its configuration, every configured source answered
// ("ok"), at least one answered (ok or degraded), the last pass converged
// (its command, if it ran one, exited 0), and the latest deployment of
// each name succeeded and was signalled. No pass since boot is
// "no-pass", unless os-collect-config stopped: then it is degraded, and
// the wait is over. Deployments are judged in every case: a failure
// shows even before the first pass.
func judge(rep *Report) {
	add := func(kind, name, reason string) { rep.Problems = append(rep.Problems, Problem{kind, name, reason}) }
	if s := rep.Stopped; s != nil {
		kind := "config"
		if s.Cause != "configuration" {
			kind = "stopped" // a cause a later agent adds
		}
		add(kind, "", fmt.Sprintf("os-collect-config stopped at %s (exit %d): %s", s.At.Format(time.RFC3339), s.Exit, s.Error))
	}
	if p := rep.Pass; p != nil {
		judgePass(p, add)
	}
	latest := map[string]bool{}
	for _, d := range agentstate.Latest(plain(rep.Deployments)) {
		latest[d.ID] = true
	}
	for i := range rep.Deployments {
		d := &rep.Deployments[i]
		if !latest[d.ID] {
			continue
		}
		if d.Problem = deploymentProblem(d.Deployment, rep.Pass); d.Problem != "" {
			name := d.Name
			if name == "" {
				name = d.ID
			}
			add("deployment", name, d.Problem)
		}
	}
	switch {
	case rep.Stopped == nil && rep.Pass == nil:
		rep.Health = "no-pass"
	case len(rep.Problems) > 0:
		rep.Health = "degraded"
	default:
		rep.Health = "healthy"
	}
}

// judgePass adds the problems of the last pass: its sources, its command.
func judgePass(p *agentstate.Pass, add func(kind, name, reason string)) {
	answered := 0
	for _, c := range p.Collectors {
		if c.Result == "ok" || c.Result == "degraded" {
			answered++ // a degraded source answered, with part of its data kept
		}
		switch c.Result {
		case "ok", "not-configured":
		default: // "unavailable", "degraded" and whatever a later agent adds
			reason := c.Result
			if c.Reason != "" {
				reason += ": " + c.Reason
			}
			add("source", c.Name, reason)
		}
	}
	if answered == 0 {
		add("pass", "", "no source answered")
	}
	switch c := p.Command; {
	case c != nil && c.Exit < 0:
		add("command", c.Command, fmt.Sprintf("killed by signal %d", -c.Exit))
	case c != nil && c.Exit != 0:
		add("command", c.Command, fmt.Sprintf("exited %d", c.Exit))
	case !p.Converged:
		add("pass", "", "did not finish (see journalctl -u os-collect-config)")
	}
}

func plain(ds []Deployment) []agentstate.Deployment {
	out := make([]agentstate.Deployment, len(ds))
	for i, d := range ds {
		out[i] = d.Deployment
	}
	return out
}

// deploymentProblem says why d is not a success (agentstate's Outcome):
// one without a signal record is a problem only when the last pass
// started it and ended without signalling it. p is nil when no pass has
// ended since boot.
func deploymentProblem(d agentstate.Deployment, p *agentstate.Pass) string {
	s := d.Signal
	switch d.Outcome(p) {
	case agentstate.Failed:
		reason := "status code " + s.StatusCode
		if s.Result != agentstate.SignalSent {
			reason += ", and " + unsent(s)
		}
		return reason
	case agentstate.Unsignalled:
		if s == nil {
			return "not signalled: the pass that ran it ended at " + p.Ended.Format(time.RFC3339)
		}
		return unsent(s)
	}
	return ""
}

func unsent(s *agentstate.Signal) string {
	if s.Result == agentstate.SignalFailed {
		return fmt.Sprintf("its %s signal failed (heat-config-notify exit %d)", s.Transport, s.NotifyExit)
	}
	return fmt.Sprintf("its %s signal was not sent (%s)", s.Transport, strings.ReplaceAll(s.Result, "-", " "))
}
