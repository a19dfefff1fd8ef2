package main

import (
	"fmt"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
	"io"
	"text/tabwriter"
)

// Targets, informational: a MISS does not change the exit status. Speed
// is judged against the floor, the least any os-apply-config must spend
// on this filesystem (ours/floor, lower is better), since the ratio to the
// reference depends on the disk more than on either program.
const (
	targetOverFloor  = 3.0
	targetOursRSSMiB = 20.0
)

// sample is one timed run of one program.
type sample = benchkit.Sample

// caseResult holds the timed samples of both programs for one case.
type caseResult struct {
	name      string
	ref, ours []sample
	floor     []sample // see floor.go; wall time only
}

var (
	median     = benchkit.Median
	peakRSSMiB = benchkit.PeakRSSMiB
	ratio      = benchkit.Ratio
)

func formatRatio(r float64) string { return fmt.Sprintf("%.1fx", r) }

func passMiss(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// targetLine is the machine-readable form of one target, one line that
// the summary of make bench is built from:
// TARGET <program>/<figure> measured=<value><unit> goal=<op><value><unit> PASS|MISS.
func targetLine(figure, measured, goal string, ok bool) string {
	return fmt.Sprintf("TARGET os-apply-config/%s measured=%s goal=%s %s", figure, measured, goal, passMiss(ok))
}

// fsLabel names the workdir's filesystem in target names: make bench runs
// the benchmark on tmpfs and on the disk.
func fsLabel(fs string) string {
	if fs == "tmpfs" {
		return "tmpfs"
	}
	return "disk"
}

// printReport writes the corpus line, one row per case, the memory
// target row, and a TARGET line per target (fs: the workdir's filesystem).
func printReport(w io.Writer, c *corpus, results []caseResult, fs string) {
	fmt.Fprintf(w, "corpus: %d templates (%d with .oac) in %d service dirs; metadata %d files, %d bytes (%.0f KiB); steady changes service %q\n",
		len(c.templates), c.oacCount(), len(serviceNames), len(c.meta), c.metaBytes(), float64(c.metaBytes())/1024, c.changed)
	if len(results) == 0 {
		fmt.Fprintln(w, "no timings: no case passed the output check")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\truns\tref median ms\tours median ms\tratio\tfloor ms\tours/floor\tceiling\tref peak RSS MiB\tours peak RSS MiB\ttarget")
	var oursPeak float64
	var targets []string
	for _, r := range results {
		refMs, oursMs := median(r.ref), median(r.ours)
		oursPeak = max(oursPeak, peakRSSMiB(r.ours))
		floorMs, overFloor, ceiling, target := "-", "-", "-", "-"
		if len(r.floor) > 0 {
			f := median(r.floor)
			over := ratio(oursMs, f)
			floorMs, overFloor, ceiling = fmt.Sprintf("%.1f", f), formatRatio(over), formatRatio(ratio(refMs, f))
			target = fmt.Sprintf("ours/floor <= %.0fx %s", targetOverFloor, passMiss(over <= targetOverFloor))
			targets = append(targets, targetLine(r.name+"-"+fsLabel(fs)+"-over-floor", formatRatio(over),
				fmt.Sprintf("<=%gx", targetOverFloor), over <= targetOverFloor))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\n",
			r.name, len(r.ref), refMs, oursMs, formatRatio(ratio(refMs, oursMs)), floorMs, overFloor, ceiling,
			peakRSSMiB(r.ref), peakRSSMiB(r.ours), target)
	}
	fmt.Fprintf(tw, "memory\t\t\t\t\t\t\t\t\t%.1f\tours peak RSS <= %.0f MiB %s\n",
		oursPeak, targetOursRSSMiB, passMiss(oursPeak <= targetOursRSSMiB))
	tw.Flush()
	targets = append(targets, targetLine("peak-rss-"+fsLabel(fs), fmt.Sprintf("%.1fMiB", oursPeak),
		fmt.Sprintf("<=%gMiB", targetOursRSSMiB), oursPeak <= targetOursRSSMiB))
	fmt.Fprintln(w, "floor: the least any os-apply-config must spend here, timed in-process between the two programs "+
		"(fresh: create the output files and one syncfs; steady: read the templates, the outputs and the metadata); "+
		"ours/floor: how far ours is from it (lower is better); ceiling = ref/floor, the best ratio to the reference "+
		"any program could reach on this filesystem")
	for _, t := range targets {
		fmt.Fprintln(w, t)
	}
}
