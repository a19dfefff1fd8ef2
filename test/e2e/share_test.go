package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// ownShareGoal is issue 25's target for the agent's own share of one
// HEAT_SIGNAL or ZAQAR_SIGNAL deployment once the stack user's token is
// cached. It is reported, never asserted: timings belong to benchmarks.
const ownShareGoal = 50 * time.Millisecond

// deploymentShare is what one deployment cost, as 55-heat-config's log
// shows it: from "Running <hook>" to the first line after
// heat-config-notify's answer (55-heat-config moving on), less the hook
// and the signal request ("Signal(l)ing to" to the answer).
type deploymentShare struct {
	group          string
	span           time.Duration // Running <hook> → the next line after the answer
	hook, request  time.Duration
	signalled      bool
	hookEnd, sigAt time.Time
}

// own is the agent's own time for the deployment: process starts,
// reading inputs, writing state, the token (fresh or cached) where the
// transport gets it before "Signalling to" (heat-api).
func (s deploymentShare) own() time.Duration { return s.span - s.hook - s.request }

var runningNotify = regexp.MustCompile(`\[DEBUG\] Running \S*/heat-config-notify `)

// deploymentShares reads the deployments 55-heat-config ran since a
// time, each with its hook and, when heat-config-notify signalled it,
// the signal.
func (a *Agent) deploymentShares(since time.Time) []deploymentShare {
	hooks := a.hooksDir() + "/"
	lines := a.Lines()
	var out []deploymentShare
	for i, l := range lines {
		_, rest, ok := strings.Cut(l.Text, "] Running "+hooks)
		if !ok || l.At.Before(since) {
			continue
		}
		s := deploymentShare{}
		s.group, _, _ = strings.Cut(rest, " ")
		start := when(l)
		var sigStart time.Time
		end := start
	scan:
		for j := i + 1; j < len(lines); j++ {
			m := lines[j]
			switch {
			case s.hookEnd.IsZero() && (strings.HasSuffix(m.Text, "Completed "+hooks+s.group) || strings.Contains(m.Text, "Error running "+hooks+s.group)):
				s.hookEnd = when(m)
				s.hook = s.hookEnd.Sub(start)
				end = s.hookEnd
			case strings.Contains(m.Text, "] Running "+hooks):
				break scan // the next deployment: this one sent no signal
			case runningNotify.MatchString(m.Text):
				s.signalled = true
			case s.signalled && signalStart.MatchString(m.Text):
				sigStart = when(m)
			case s.signalled && signalEnd.MatchString(m.Text) && !sigStart.IsZero():
				s.sigAt = when(m)
				s.request = s.sigAt.Sub(sigStart)
				if j+1 < len(lines) {
					end = when(lines[j+1])
				} else {
					end = s.sigAt
				}
				break scan
			}
		}
		s.span = end.Sub(start)
		out = append(out, s)
	}
	return out
}

// logShares logs, greppably, each signalled deployment's own share and,
// for the steps where the token is cached (update), the target.
func (d *deploy) logShares(t *testing.T, step string, since time.Time) {
	for _, s := range d.agent.deploymentShares(since) {
		if !s.signalled {
			continue
		}
		t.Logf("DEPLOYMENT_SHARE pair=%s step=%s group=%s own=%.3fs hook=%.3fs signal_request=%.3fs",
			d.p.name, step, s.group, s.own().Seconds(), s.hook.Seconds(), s.request.Seconds())
		if step == "update" && (d.p.signal == HeatSignal || d.p.signal == ZaqarSignal) {
			verdict := "MISS"
			if s.own() <= ownShareGoal {
				verdict = "PASS"
			}
			t.Logf("TARGET heat-config/own-share-%s measured=%.0fms goal=<=%dms %s",
				d.p.name, float64(s.own())/float64(time.Millisecond), ownShareGoal.Milliseconds(), verdict)
		}
	}
}
