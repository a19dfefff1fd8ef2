package main

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tripleo-go/agent/test/fleet/stats"
	"github.com/tripleo-go/agent/test/fleet/zaqarmodel"
	"github.com/tripleo-go/agent/tools/fleetsim/report"
)

// The zaqar-push variant: each agent's zaqar collector talks to its own
// queue of the Zaqar model over a websocket (use_websockets), the
// changes are posted to every queue, and the model pushes them to the
// subscribed sockets. With today's daemon a socket lives for one pass;
// with the daemon that keeps its subscription, for as long as it runs.

// The targets of issue 25 for a pushed fleet.
const (
	pushP99Goal  = 2.0        // s, change -> command p99 at 10,000 agents (the probes variant)
	pushIdleGoal = 0.1 * 268. // requests per idle agent-hour: 10% of the polling zaqar agent's (docs/scale.md)
)

// pushIdle is the pushed fleet's idle stretch, in intervals: its idle
// cost is not a poll's but what comes every few minutes (the daemon's
// safety listing every 10 minutes), which a 3-minute window, the fleet
// started together, would catch for all agents or for none. 20
// intervals are 10 minutes at 30 s: every listing once.
const pushIdle = 20

// pushSettle is how long a pushed fleet's start gets before its idle
// window opens, in intervals beyond the timeline's start: 10,000 agents
// each authenticating, opening a socket and subscribing took about 3
// minutes on 2 cores, where 1,000 had settled (no request for 6
// minutes) within the 2 of the start.
const pushSettle = 6

// idleExtra is how much longer v's idle stretch is than the timeline's
// (the short run keeps its 27 s): pushSettle, then pushIdle measured.
func idleExtra(c simConfig, v variant) int {
	if !v.Zaqar || c.short {
		return 0
	}
	return pushSettle + pushIdle - (idleEnd - startEnd)
}

// idleFrom is where v's idle window opens, in intervals.
func idleFrom(c simConfig, v variant) int {
	if !v.Zaqar || c.short || v.Probes > 0 {
		return startEnd
	}
	return startEnd + pushSettle
}

// zaqarConf is agent i's [zaqar] group.
func zaqarConf(i int, authURL string) string {
	return fmt.Sprintf("[zaqar]\nauth_url = %s\nuser_id = %s\npassword = %s\nproject_id = %s\nqueue_id = %s\nuse_websockets = true\n",
		authURL, zaqarmodel.UserID, zaqarmodel.Password, zaqarmodel.ProjectID, zaqarmodel.QueueName(i))
}

// diffCounts is b - a, kind by kind, without the kinds that did not move.
func diffCounts(b, a map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// printTargets prints the pushed fleet's TARGET lines (i25b's format);
// the short run's figures are named apart, at its 1 s interval and 200
// agents they are not the target's, and so are those of fewer agents.
// Change -> command p99 is a target for the probes variant only: with
// whole daemons, every one of them in this process, it measures this
// machine's cores (10,000 passes of 6 ms of CPU on 2 cores: docs/scale.md),
// and is printed as an INFO line.
func printTargets(w io.Writer, c simConfig, r result) {
	if !r.Variant.Zaqar {
		return
	}
	suffix := ""
	if r.Variant.Probes > 0 {
		suffix = "-probes"
	} else if c.short {
		suffix = "-short"
	}
	if !c.short && r.Agents < 10000 {
		suffix += fmt.Sprintf("-%d-agents", r.Agents)
	}
	p := stats.Summarize(r.Propagation)
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	if r.Variant.Probes == 0 {
		fmt.Fprintf(w, "INFO os-collect-config/fleet-push-change-to-command-p99%s measured=%.2fs (whole daemons on this machine's cores: not a target, docs/scale.md)\n",
			suffix, p.P99)
		fmt.Fprintf(w, "TARGET os-collect-config/fleet-push-idle-requests-per-agent-hour%s measured=%.1freq goal=<=%.1freq %s\n",
			suffix, r.IdleRequestsPerAgentHour, pushIdleGoal, verdict(r.IdleRequestsPerAgentHour <= pushIdleGoal))
		return
	}
	// an agent that never ran the change is a miss whatever the p99;
	// the probes have no idle stretch
	fmt.Fprintf(w, "TARGET os-collect-config/fleet-push-change-to-command-p99%s measured=%.2fs goal=<=%gs %s\n",
		suffix, p.P99, pushP99Goal, verdict(p.N > 0 && r.Missed == 0 && p.P99 <= pushP99Goal))
}

// pushPlots are the pushed fleets' plots, beside the TempURL ones:
// requests and frames to the Zaqar model over the run (sim-push-rate),
// and change to command (sim-push-propagation), with the polling
// fleet's for comparison when this run has it.
func pushPlots(c simConfig, pushed, plain []result) error {
	var rates, cdfs []report.Series
	for _, r := range pushed {
		name := fmt.Sprintf("%s (%d agents)", r.Variant.Name, r.Agents)
		rates = append(rates, report.Rate(name+": requests", r.Requests, r.Agents, r.Bucket*30/r.Interval),
			report.Rate(name+": websocket frames", r.Frames, r.Agents, r.Bucket*30/r.Interval))
		if len(r.Propagation) > 0 {
			cdfs = append(cdfs, report.CDF(fmt.Sprintf("%s, %d agents", r.Variant.Name, r.Agents), r.Propagation))
		}
	}
	for _, r := range plain {
		if r.Variant.Name == "ours" && len(r.Propagation) > 0 {
			cdfs = append(cdfs, report.CDF(fmt.Sprintf("ours, polling a TempURL, %d agents", r.Agents), r.Propagation))
		}
	}
	if err := report.Panels(filepath.Join(c.out, "sim-push-rate.png"),
		fmt.Sprintf("Requests and frames to the Zaqar model; start at once, idle, 3 changes posted, outage, recovery (interval %s)", c.interval),
		"seconds since the fleet started (at a 30 s interval)", "per s per 1000 agents", rates); err != nil {
		return err
	}
	if len(cdfs) == 0 {
		return nil
	}
	return report.Lines(filepath.Join(c.out, "sim-push-propagation.png"),
		"A change posted to the queues, to the node's command", "seconds after the change", "% of agents whose command ran", cdfs)
}

// pushTable is the pushed fleets' own table: what an idle node costs by
// service, and the frames beside the requests.
func pushTable(pushed []result) string {
	if len(pushed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nZaqar model (per idle agent-hour in real time, not scaled to the interval; requests are HTTP requests and a socket's actions, frames are every websocket frame both ways):\n\n")
	b.WriteString("| fleet | agents | requests / idle agent-hour | frames / idle agent-hour | change -> push written p50 / p99 / max (s), pushes | idle requests by kind (whole fleet) | all requests by service | all frames by kind |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range pushed {
		d := stats.Summarize(r.PushDelays)
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.2f / %.2f / %.2f, %d | %s | %s | %s |\n", r.Variant.Name, r.Agents, r.IdleRequestsPerAgentHour,
			r.IdleFramesPerAgentHour, d.P50, d.P99, d.Max, d.N, counts(r.IdleKinds), counts(r.Services), counts(r.FrameKinds))
	}
	return b.String()
}

// counts is "kind n, kind n" in the kinds' order.
func counts(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}
