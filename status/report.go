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
	// Problems are the reasons the node is degraded, in the order of the
	// pipeline: sources, the command, deployments. Empty when healthy.
	Problems    []Problem               `json:"problems"`
	Pass        *agentstate.Pass        `json:"pass"`
	Deployments []agentstate.Deployment `json:"deployments"`
}

// Problem is one reason the node is degraded.
type Problem struct {
	// Kind is "pass", "source", "command" or "deployment".
	Kind string `json:"kind"`
	// Name is the source's, the command's or the deployment's (its id
	// when it has no name); absent for "pass".
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
		rep.Pass = &pass
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	ds, err := deployed.ReadDeployments(p.deployed)
	if err != nil {
		return nil, err
	}
	rep.Deployments = ds
	judge(rep)
	return rep, nil
}

// judge sets the health and the problems. Healthy: every configured
// source answered ("ok"), at least one answered (ok or degraded), the last pass converged (its
// command, if it ran one, exited 0), and the latest deployment of each
// name succeeded and was signalled.
func judge(rep *Report) {
	p := rep.Pass
	if p == nil {
		rep.Health = "no-pass"
		return
	}
	add := func(kind, name, reason string) { rep.Problems = append(rep.Problems, Problem{kind, name, reason}) }
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
	latest := map[string]bool{}
	for _, d := range agentstate.Latest(rep.Deployments) {
		latest[d.ID] = true
	}
	for i := range rep.Deployments {
		d := &rep.Deployments[i]
		if !latest[d.ID] {
			continue
		}
		if d.Problem = deploymentProblem(*d, p); d.Problem != "" {
			name := d.Name
			if name == "" {
				name = d.ID
			}
			add("deployment", name, d.Problem)
		}
	}
	rep.Health = "healthy"
	if len(rep.Problems) > 0 {
		rep.Health = "degraded"
	}
}

// deploymentProblem says why d is not a success (agentstate's Outcome):
// one without a signal record is a problem only when the last pass
// started it and ended without signalling it.
func deploymentProblem(d agentstate.Deployment, p *agentstate.Pass) string {
	s := d.Signal
	switch d.Outcome(p) {
	case agentstate.Failed:
		reason := "status code " + s.StatusCode
		if s.Result != "sent" {
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
	if s.Result == "failed" {
		return fmt.Sprintf("its %s signal failed (heat-config-notify exit %d)", s.Transport, s.NotifyExit)
	}
	return fmt.Sprintf("its %s signal was not sent (%s)", s.Transport, strings.ReplaceAll(s.Result, "-", " "))
}
