package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// Only the probes variant's change -> command p99 is a TARGET: with
// 10,000 whole daemons in one process the figure measures the 2 cores
// (docs/scale.md), so theirs is an INFO line, as is the short run's.
// The idle line stays a target for whole daemons. Below 10,000 agents a
// figure is named after its size.
func TestPrintTargets(t *testing.T) {
	pushed := variant{Name: "ours, zaqar push", Zaqar: true}
	probes := variant{Name: "probes", Zaqar: true, Probes: 50}
	prop := []float64{0.4, 0.5, 1.1}
	tests := []struct {
		name  string
		short bool
		r     result
		want  []string
	}{
		{"whole daemons", false, result{Variant: pushed, Agents: 10000, Propagation: []float64{20, 46}, IdleRequestsPerAgentHour: 6},
			[]string{
				"INFO os-collect-config/fleet-push-change-to-command-p99 measured=45.74s (whole daemons on this machine's cores: not a target, docs/scale.md)",
				"TARGET os-collect-config/fleet-push-idle-requests-per-agent-hour measured=6.0req goal=<=26.8req PASS",
			}},
		{"short", true, result{Variant: pushed, Agents: 200, Propagation: prop},
			[]string{
				"INFO os-collect-config/fleet-push-change-to-command-p99-short measured=1.09s (whole daemons on this machine's cores: not a target, docs/scale.md)",
				"TARGET os-collect-config/fleet-push-idle-requests-per-agent-hour-short measured=0.0req goal=<=26.8req PASS",
			}},
		{"probes", false, result{Variant: probes, Agents: 10000, Propagation: prop},
			[]string{"TARGET os-collect-config/fleet-push-change-to-command-p99-probes measured=1.09s goal=<=2s PASS"}},
		{"probes missed one", false, result{Variant: probes, Agents: 10000, Propagation: prop, Missed: 1},
			[]string{"TARGET os-collect-config/fleet-push-change-to-command-p99-probes measured=1.09s goal=<=2s MISS"}},
		{"probes, fewer sockets", false, result{Variant: probes, Agents: 1000, Propagation: prop},
			[]string{"TARGET os-collect-config/fleet-push-change-to-command-p99-probes-1000-agents measured=1.09s goal=<=2s PASS"}},
		{"polling", false, result{Variant: variant{Name: "ours"}, Agents: 10000, Propagation: prop}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			printTargets(&b, simConfig{short: tc.short}, tc.r)
			got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if b.Len() == 0 {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, line := range got {
				if _, ok := benchkit.ParseTarget(line); ok != strings.HasPrefix(line, "TARGET ") {
					t.Errorf("%q: read as a target: %v", line, ok)
				}
			}
		})
	}
}
