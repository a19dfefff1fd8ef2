package main

import (
	"fmt"

	"github.com/tripleo-go/agent/internal/testkit/fleet/stats"
	"github.com/tripleo-go/agent/internal/testkit/fleet/zaqarmodel"
)

// The zaqar-push variant: each agent's zaqar collector talks to its own
// queue of the Zaqar model over a websocket (use_websockets), the
// changes are posted to every queue, and the model pushes them to the
// subscribed sockets. With today's daemon a socket lives for one pass;
// with the daemon that keeps its subscription, for as long as it runs.

// The targets of issue 25 for a pushed fleet.
const (
	pushP99Goal  = 2.0        // s, change -> command p99 at 10,000 agents
	pushIdleGoal = 0.1 * 268. // requests per idle agent-hour: 10% of the polling zaqar agent's (docs/scale.md)
)

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
// agents they are not the target's.
func printTargets(c simConfig, r result) {
	if !r.Variant.Zaqar {
		return
	}
	suffix := ""
	if c.short {
		suffix = "-short"
	} else if r.Agents < 10000 {
		suffix = fmt.Sprintf("-%d-agents", r.Agents)
	}
	p := stats.Summarize(r.Propagation)
	verdict := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	// an agent that never ran the change is a miss whatever the p99
	fmt.Printf("TARGET os-collect-config/fleet-push-change-to-command-p99%s measured=%.2fs goal=<=%gs %s\n",
		suffix, p.P99, pushP99Goal, verdict(p.N > 0 && r.Missed == 0 && p.P99 <= pushP99Goal))
	fmt.Printf("TARGET os-collect-config/fleet-push-idle-requests-per-agent-hour%s measured=%.1freq goal=<=%.1freq %s\n",
		suffix, r.IdleRequestsPerAgentHour, pushIdleGoal, verdict(r.IdleRequestsPerAgentHour <= pushIdleGoal))
}
