package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/tools/fleetsim/report"
	"github.com/tripleo-go/agent/tools/fleetsim/stats"
)

// writeReport leaves results.json, report.md (the tables docs/scale.md
// quotes) and the plots in c.out.
func writeReport(c simConfig, results []result) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(c.out, "sim-results.json"), results); err != nil {
		return err
	}
	var rates, cdfs []report.Series
	for _, r := range results {
		rates = append(rates, report.Rate(fmt.Sprintf("%s (%d agents)", r.Variant.Name, r.Agents), r.Requests, r.Agents, r.Bucket*30/r.Interval))
		if len(r.Propagation) > 0 {
			cdfs = append(cdfs, report.CDF(r.Variant.Name, r.Propagation))
		}
	}
	if err := report.Lines(filepath.Join(c.out, "sim-rate.png"),
		fmt.Sprintf("Requests to the metadata endpoint, fleet started at once (interval %s)", c.interval),
		"seconds since the fleet started (at a 30 s interval)", "requests/s per 1000 agents (at 30 s)", rates); err != nil {
		return err
	}
	if len(cdfs) > 0 {
		if err := report.Lines(filepath.Join(c.out, "sim-propagation.png"),
			fmt.Sprintf("Metadata change to the node's command, %d agents", results[0].Agents),
			"seconds after the change", "% of agents whose command ran", cdfs); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Model endpoint, interval %s, %d-byte document, latency %s, outage %s.\n\n", c.interval, c.docBytes, c.latency, c.outage)
	b.WriteString("| fleet | agents | requests / idle agent-hour | bytes out / idle agent-hour | bytes in / idle agent-hour | idle requests/s (per 10,000) | idle bytes/s out (per 10,000) | busiest s / mean, idle | start peak / idle mean | busiest s / mean, after the outage | change -> command p50 / p99 / max (s) | missed | memory / agent (RSS, heap) | model CPU s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		p := stats.Summarize(r.Propagation)
		prop, rec, mem := "-", "-", "-"
		if p.N > 0 {
			prop = fmt.Sprintf("%.1f / %.1f / %.1f", p.P50, p.P99, p.Max)
		}
		if r.Recovery.Mean > 0 {
			rec = fmt.Sprintf("%.2f", r.Recovery.Ratio)
		}
		if r.Memory.RSS > 0 {
			mem = fmt.Sprintf("%.0f KiB, %.0f KiB", r.Memory.RSS/1024, (r.Memory.Heap+r.Memory.Stacks)/1024)
		}
		per10k := 10000 / float64(r.Agents)
		idleBytes := stats.Sum(window(r.BytesOut, seconds(c, startEnd), seconds(c, idleEnd), c.interval/30)) / (seconds(c, idleEnd-startEnd).Seconds()) * c.interval.Seconds() / 30
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %.0f | %s | %.2f | %.1f | %s | %s | %d | %s | %.1f |\n",
			r.Variant.Name, r.Agents, r.IdleRequestsPerAgentHour, human(r.IdleBytesOutPerAgentHour), human(r.IdleBytesInPerAgentHour),
			r.Idle.Mean*per10k, human(idleBytes*per10k), r.Idle.Ratio, r.StartVsIdle.Ratio, rec, prop, r.Missed, mem, r.ModelCPU)
	}
	b.WriteString("\nRequests by kind: ")
	for _, r := range results {
		fmt.Fprintf(&b, "%s: %v; ", r.Variant.Name, r.Kinds)
	}
	b.WriteString("\n")
	return os.WriteFile(filepath.Join(c.out, "sim-report.md"), []byte(b.String()), 0o644)
}

func seconds(c simConfig, k int) time.Duration { return time.Duration(k) * c.interval }

// human is a byte count in B, KB, MB (powers of 1000).
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1f MB", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f KB", v/1e3)
	}
	return fmt.Sprintf("%.0f B", v)
}
