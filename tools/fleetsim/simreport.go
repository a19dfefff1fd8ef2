package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tripleo-go/agent/test/fleet/stats"
	"github.com/tripleo-go/agent/tools/fleetsim/report"
)

// writeReport leaves results.json, report.md (the tables docs/scale.md
// quotes) and the plots in c.out.
func writeReport(c simConfig, results []result) error {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	results = mergeResults(filepath.Join(c.out, "sim-results.json"), results)
	if err := writeJSON(filepath.Join(c.out, "sim-results.json"), results); err != nil {
		return err
	}
	var plain, pushed []result
	for _, r := range results {
		if r.Variant.Zaqar {
			pushed = append(pushed, r)
		} else {
			plain = append(plain, r)
		}
	}
	// each kind of fleet has its plots: a run of one kind leaves the
	// other's as they were
	if len(plain) > 0 {
		if err := plainPlots(c, plain); err != nil {
			return err
		}
	}
	if len(pushed) > 0 {
		if err := pushPlots(c, pushed, plain); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Model endpoint, interval %s, %d-byte document, latency %s, outage %s.\n\n", c.interval, c.docBytes, c.latency, c.outage)
	b.WriteString("| fleet | agents | requests / idle agent-hour | bytes out / idle agent-hour | bytes in / idle agent-hour | idle requests/s (per 10,000) | idle bytes/s out (per 10,000) | busiest s / mean, idle | p99 s / mean, idle | start peak / idle mean | busiest s / mean, after the outage | change -> command p50 / p99 / max (s) | missed | memory / agent (RSS, heap) | model CPU s | stalled s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
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
		idleEnd := int(ph(r.ExtraIdle, idleEnd))
		idleBytes := stats.Sum(window(r.BytesOut, seconds(c, startEnd), seconds(c, idleEnd), c.interval/30)) / (seconds(c, idleEnd-startEnd).Seconds()) * c.interval.Seconds() / 30
		stalled := "-" // a pushed fleet is silent while idle: no stall to tell
		if !r.Variant.Reference && !r.Variant.Zaqar && !strings.Contains(r.Variant.Conf, "jitter = false") {
			stalled = fmt.Sprint(stalls(c, r))
		}
		// the 99th percentile second: what a stall of the simulating
		// machine (a second of nothing, then a burst) does not move
		p99 := 0.0
		if r.Idle.Mean > 0 {
			p99 = stats.Percentile(window(r.Requests, seconds(c, startEnd), seconds(c, idleEnd), c.interval/30), 99) / r.Idle.Mean
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %.0f | %s | %.2f | %.2f | %.1f | %s | %s | %d | %s | %.1f | %s |\n",
			r.Variant.Name, r.Agents, r.IdleRequestsPerAgentHour, human(r.IdleBytesOutPerAgentHour), human(r.IdleBytesInPerAgentHour),
			r.Idle.Mean*per10k, human(idleBytes*per10k), r.Idle.Ratio, p99, r.StartVsIdle.Ratio, rec, prop, r.Missed, mem, r.ModelCPU, stalled)
	}
	b.WriteString("\nRequests by kind: ")
	for _, r := range results {
		fmt.Fprintf(&b, "%s: %v; ", r.Variant.Name, r.Kinds)
	}
	b.WriteString("\n")
	b.WriteString(pushTable(pushed))
	return os.WriteFile(filepath.Join(c.out, "sim-report.md"), []byte(b.String()), 0o644)
}

// plainPlots are the TempURL fleets' plots: requests over the run, and
// change to command.
func plainPlots(c simConfig, results []result) error {
	var rates, cdfs []report.Series
	for _, r := range results {
		if len(r.Requests) == 0 {
			continue
		}
		rates = append(rates, report.Rate(fmt.Sprintf("%s (%d agents)", r.Variant.Name, r.Agents), r.Requests, r.Agents, r.Bucket*30/r.Interval))
		if len(r.Propagation) > 0 {
			cdfs = append(cdfs, report.CDF(r.Variant.Name, r.Propagation))
		}
	}
	if err := report.Panels(filepath.Join(c.out, "sim-rate.png"),
		fmt.Sprintf("Requests to the metadata endpoint; start at once, idle, 3 changes, hung outage, recovery (interval %s)", c.interval),
		"seconds since the fleet started (at a 30 s interval)", "req/s per 1000 agents", rates); err != nil {
		return err
	}
	if len(cdfs) == 0 {
		return nil
	}
	return report.Lines(filepath.Join(c.out, "sim-propagation.png"),
		fmt.Sprintf("Metadata change to the node's command, %d agents", results[0].Agents),
		"seconds after the change", "% of agents whose command ran", cdfs)
}

// stalls counts the buckets without a request while a phased fleet polls
// (idle, changes, recovery): a fleet of thousands at phases of their own
// never has one, so each is the simulating machine stalling, and the
// spreads around it are the machine's, not the agents'.
func stalls(c simConfig, r result) int {
	n := 0
	x := r.ExtraIdle
	for _, w := range [][2]int{{startEnd, int(ph(x, outageAt))}, {int(ph(x, outageEnd)), int(ph(x, recoveryEnd))}} {
		for _, v := range window(r.Requests, seconds(c, w[0]), seconds(c, w[1]), c.interval/30) {
			if v == 0 {
				n++
			}
		}
	}
	return n
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

// mergeResults adds the results of an earlier run in the same directory
// (-variants runs some variants only), this run's replacing its own.
func mergeResults(path string, results []result) []result {
	b, err := os.ReadFile(path)
	if err != nil {
		return results
	}
	var old []result
	if json.Unmarshal(b, &old) != nil {
		return results
	}
	var out []result
	for _, o := range old {
		if !slices.ContainsFunc(results, func(r result) bool { return r.Variant.Name == o.Variant.Name }) {
			out = append(out, o)
		}
	}
	return append(out, results...)
}

// reportMain writes the report again from the results in -out (after a
// change to the report, or runs of some variants each).
func reportMain(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	var c simConfig
	fs.StringVar(&c.out, "out", "", "the directory of sim-results.json")
	fs.IntVar(&c.docBytes, "doc-bytes", 8192, "the document's size the runs used")
	fs.StringVar(&c.outage, "outage", "hang", "the outage mode the runs used")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(c.out, "sim-results.json"))
	if err != nil {
		return err
	}
	var results []result
	if err := json.Unmarshal(b, &results); err != nil {
		return err
	}
	if len(results) == 0 {
		return fmt.Errorf("no results in %s", c.out)
	}
	c.interval = time.Duration(results[0].Interval * float64(time.Second))
	return writeReport(c, results)
}

func printResult(r result) {
	p := stats.Summarize(r.Propagation)
	fmt.Printf("%-24s agents %5d | idle per agent-hour (30 s): %.0f requests, %.0f bytes out, %.0f in | busiest/mean idle %.2f, "+
		"start peak/idle mean %.1f, recovery %.2f | change->command p50 %.1fs p99 %.1fs max %.1fs missed %d | memory/agent %.0f KiB RSS, %.0f KiB heap | model CPU %.1fs\n",
		r.Variant.Name, r.Agents, r.IdleRequestsPerAgentHour, r.IdleBytesOutPerAgentHour, r.IdleBytesInPerAgentHour,
		r.Idle.Ratio, r.StartVsIdle.Ratio, r.Recovery.Ratio, p.P50, p.P99, p.Max, r.Missed, r.Memory.RSS/1024, r.Memory.Heap/1024, r.ModelCPU)
	if r.Variant.Zaqar {
		d := stats.Summarize(r.PushDelays)
		fmt.Printf("  zaqar model: change->push written p50 %.2fs p99 %.2fs max %.2fs (%d pushes) | %.0f frames / idle agent-hour; idle requests by kind %v; all requests by service %v; frames %v\n",
			d.P50, d.P99, d.Max, d.N, r.IdleFramesPerAgentHour, r.IdleKinds, r.Services, r.FrameKinds)
	}
	if r.Variant.Probes > 0 {
		d := stats.Summarize(r.Received)
		fmt.Printf("  %d daemons among %d subscribed sockets: change->push received p50 %.2fs p99 %.2fs max %.2fs (%d pushes), %d missed\n",
			r.Variant.Probes, r.Agents, d.P50, d.P99, d.Max, d.N, r.ReceivedMissed)
	}
	if len(r.Exited) > 0 {
		fmt.Printf("  %d agents stopped by themselves; first: %s\n", len(r.Exited), r.Exited[0])
	}
	if r.Logged > 0 {
		fmt.Printf("  %d log lines; last: %s\n", r.Logged, strings.Join(r.LastLines, " | "))
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
