// Package metrics writes the agent's metrics in Prometheus's text
// exposition format, for node_exporter's textfile collector: one file
// per node, replaced whole after each os-collect-config pass
// (docs/metrics.md lists them).
package metrics

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/durable"
)

// Family is one metric: its name, help, type ("gauge") and samples.
type Family struct {
	Name, Help, Type string
	Samples          []Sample
}

// Sample is one value with its labels, in order.
type Sample struct {
	Labels [][2]string
	Value  float64
}

// Write renders families in the text exposition format 0.0.4: a HELP and
// a TYPE line, then the samples, for each.
func Write(w io.Writer, fams []Family) error {
	var b bytes.Buffer
	for _, f := range fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.Name, escapeHelp(f.Help), f.Name, f.Type)
		for _, s := range f.Samples {
			b.WriteString(f.Name)
			if len(s.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range s.Labels {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "%s=\"%s\"", l[0], escapeLabel(l[1]))
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(value(s.Value))
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

func value(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// State is what the agent's metrics are made of: the last pass, when
// each source's data last changed, the last command run (by that pass or
// an earlier one) and heat-config's deployments.
type State struct {
	Pass agentstate.Pass
	// LastChange is when each source's data last changed (absent:
	// unknown, as before its first data).
	LastChange map[string]time.Time
	// Command is the last command run, nil if none since the records
	// began.
	Command     *agentstate.Command
	Deployments []agentstate.Deployment
}

// Families are the agent's metrics (docs/metrics.md).
func Families(st State) []Family {
	p := st.Pass
	g := func(name, help string, samples ...Sample) Family {
		return Family{Name: "tripleo_agent_" + name, Help: help, Type: "gauge", Samples: samples}
	}
	one := func(v float64) Sample { return Sample{Value: v} }
	unix := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	fams := []Family{
		g("pass_last_timestamp_seconds", "When os-collect-config's last pass ended, in seconds since the epoch.", one(unix(p.Ended))),
		g("pass_last_duration_seconds", "How long os-collect-config's last pass took, its command included.", one(p.Ended.Sub(p.Started).Seconds())),
		g("pass_last_converged", "1 if the last pass converged: its command succeeded, or there was nothing new.", one(b2f(p.Converged))),
	}
	var up, changed []Sample
	for _, c := range p.Collectors {
		if c.Result == "not-configured" {
			continue
		}
		l := [][2]string{{"source", c.Name}}
		up = append(up, Sample{Labels: l, Value: b2f(c.Result == "ok")})
		if t, ok := st.LastChange[c.Name]; ok && !t.IsZero() {
			changed = append(changed, Sample{Labels: l, Value: unix(t)})
		}
	}
	fams = append(fams,
		g("source_up", "1 if the configured source answered in the last pass (result ok), 0 if it was unavailable or degraded.", up...),
		g("source_last_change_timestamp_seconds", "When the source's data last changed, in seconds since the epoch.", changed...))
	if c := st.Command; c != nil {
		fams = append(fams,
			g("command_last_exit_code", "The exit status of the last command os-collect-config ran (negative: killed by that signal).", one(float64(c.Exit))),
			g("command_last_duration_seconds", "How long the last command ran.", one(c.Seconds)),
			g("command_last_timestamp_seconds", "When the last command started, in seconds since the epoch.", one(unix(c.Started))))
	}
	counts := map[string]int{agentstate.Succeeded: 0, agentstate.Failed: 0, agentstate.Unsignalled: 0, agentstate.Running: 0, agentstate.Unknown: 0}
	for _, d := range agentstate.Latest(st.Deployments) {
		counts[d.Outcome(&p)]++
	}
	var byStatus []Sample
	for _, s := range sortedKeys(counts) {
		byStatus = append(byStatus, Sample{Labels: [][2]string{{"status", s}}, Value: float64(counts[s])})
	}
	failures := 0
	for _, d := range st.Deployments {
		if d.Signal != nil && d.Signal.Result == "failed" {
			failures++
		}
	}
	fams = append(fams,
		g("deployments", "Deployments heat-config ran, the latest of each name, by final status.", byStatus...),
		g("deployment_signal_failures", "Deployments whose signal to Heat failed (heat-config-notify exited non-zero), of every record kept.", one(float64(failures))))
	return fams
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteFile replaces path with the families, atomically (node_exporter
// reads the old file or the new one, never a part), readable by all: it
// holds no secret, and node_exporter runs as its own user.
func WriteFile(path string, fams []Family) error {
	var b bytes.Buffer
	if err := Write(&b, fams); err != nil {
		return err
	}
	return durable.WriteFileMode(path, b.Bytes(), Mode)
}

// Mode is the metrics file's permission bits.
const Mode os.FileMode = 0o644
