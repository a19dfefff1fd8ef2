package status

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
)

// writeText is the short report for a person.
func writeText(w io.Writer, rep *Report, now time.Time) {
	fmt.Fprintf(w, "status: %s\n", rep.Health)
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "reason: %s\n", p)
	}
	switch {
	case rep.Pass == nil && rep.Stopped != nil:
		fmt.Fprintln(w, "last pass: none since boot")
	case rep.Pass == nil:
		fmt.Fprintln(w, "last pass: none since boot (is os-collect-config running? journalctl -u os-collect-config)")
	default:
		p := rep.Pass
		fmt.Fprintf(w, "last pass: ended %s (%s ago), %s\n", p.Ended.Format(time.RFC3339), ago(now, p.Ended), map[bool]string{true: "converged", false: "not converged"}[p.Converged])
		for _, c := range p.Collectors {
			line := fmt.Sprintf("  collector %-10s %s", c.Name, c.Result)
			if c.Changed {
				line += ", changed"
			}
			if c.Reason != "" {
				line += ": " + c.Reason
			}
			fmt.Fprintln(w, line)
		}
		if c := p.Command; c != nil {
			fmt.Fprintf(w, "  command %s: exit %d after %.1fs, at %s\n", c.Command, c.Exit, c.Seconds, c.Started.Format(time.RFC3339))
		} else {
			fmt.Fprintln(w, "  command: not run (nothing new)")
		}
	}
	if len(rep.Deployments) == 0 {
		fmt.Fprintln(w, "deployments: none")
		return
	}
	fmt.Fprintln(w, "deployments:")
	for _, d := range rep.Deployments {
		name := d.Name
		if name == "" {
			name = "(no name)"
		}
		state := map[string]string{agentstate.Running: "running", agentstate.Unsignalled: "not signalled",
			agentstate.Unknown: "no signal record (run before the agent kept them)"}[d.Outcome]
		if s := d.Signal; s != nil {
			code := s.StatusCode
			if d.Outcome == agentstate.Failed {
				code += " (failed)"
			}
			state = fmt.Sprintf("status %s, %s %s at %s", code, s.Transport, s.Result, s.At.Format(time.RFC3339))
			if s.Result == agentstate.SignalFailed {
				state += fmt.Sprintf(" (heat-config-notify exit %d)", s.NotifyExit)
			}
		}
		fmt.Fprintf(w, "  %s %s [%s] %s\n", d.ID, name, d.Group, strings.TrimSpace(state))
	}
}

func ago(now, t time.Time) time.Duration { return now.Sub(t).Round(time.Second) }
