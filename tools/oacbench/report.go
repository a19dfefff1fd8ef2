package main

import (
	"fmt"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
	"io"
	"text/tabwriter"
)

// Targets, informational: a MISS does not change the exit status. Speed
// is judged against the bound, the least an os-apply-config rendering
// with cbroglie/mustache must spend on this filesystem (ours/bound, lower
// is better; issue 34), since the ratio to the reference depends on the
// disk more than on either program. ours/floor is printed, no longer a
// target: issue 25 showed the bound alone is 3.5-4.1x the floor.
const (
	targetFreshOverBound  = 1.5
	targetSteadyOverBound = 1.3
	targetOursRSSMiB      = 20.0
)

// boundGoal is the ours/bound target of a case, if it has one.
func boundGoal(name string) (float64, bool) {
	switch name {
	case "fresh":
		return targetFreshOverBound, true
	case "steady":
		return targetSteadyOverBound, true
	}
	return 0, false
}

// sample is one timed run of one program.
type sample = benchkit.Sample

// caseResult holds the timed samples of both programs for one case.
type caseResult struct {
	name      string
	ref, ours []sample
	floor     []sample // see floor.go; wall time only
	bound     []sample // see bound.go; wall time only
	parts     []boundParts
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

// printReport writes the corpus line, one row per case and the memory
// target row.
func printReport(w io.Writer, c *corpus, results []caseResult) {
	fmt.Fprintf(w, "corpus: %d templates (%d with .oac) in %d service dirs; metadata %d files, %d bytes (%.0f KiB); steady changes service %q\n",
		len(c.templates), c.oacCount(), len(serviceNames), len(c.meta), c.metaBytes(), float64(c.metaBytes())/1024, c.changed)
	if len(results) == 0 {
		fmt.Fprintln(w, "no timings: no case passed the output check")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\truns\tref median ms\tours median ms\tratio\tfloor ms\tours/floor\tceiling\tbound ms\tours/bound\tref peak RSS MiB\tours peak RSS MiB\ttarget")
	var oursPeak float64
	for _, r := range results {
		refMs, oursMs := median(r.ref), median(r.ours)
		oursPeak = max(oursPeak, peakRSSMiB(r.ours))
		floorMs, overFloor, ceiling, target := "-", "-", "-", "-"
		boundMs, overBound := "-", "-"
		if len(r.bound) > 0 {
			bd := median(r.bound)
			boundMs, overBound = fmt.Sprintf("%.1f", bd), fmt.Sprintf("%.2fx", ratio(oursMs, bd))
			if t, ok := boundTarget(r, ""); ok {
				target = fmt.Sprintf("ours/bound %s %s", t.GoalText(), t.Verdict())
			}
		}
		if len(r.floor) > 0 {
			f := median(r.floor)
			floorMs, overFloor, ceiling = fmt.Sprintf("%.1f", f), formatRatio(ratio(oursMs, f)), formatRatio(ratio(refMs, f))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\n",
			r.name, len(r.ref), refMs, oursMs, formatRatio(ratio(refMs, oursMs)), floorMs, overFloor, ceiling,
			boundMs, overBound, peakRSSMiB(r.ref), peakRSSMiB(r.ours), target)
	}
	fmt.Fprintf(tw, "memory\t\t\t\t\t\t\t\t\t\t\t%.1f\tours peak RSS <= %.0f MiB %s\n",
		oursPeak, targetOursRSSMiB, passMiss(oursPeak <= targetOursRSSMiB))
	tw.Flush()
	fmt.Fprintln(w, "floor: the least any os-apply-config must spend here, timed in-process between the two programs "+
		"(fresh: create the output files and one syncfs; steady: read the templates, the outputs and the metadata); "+
		"ours/floor: how far ours is from it (lower is better); ceiling = ref/floor, the best ratio to the reference "+
		"any program could reach on this filesystem; bound: the least an os-apply-config rendering with "+
		"cbroglie/mustache must spend, timed in-process likewise (fresh: decode the metadata, read, parse and "+
		"render the templates, then the floor's writes; steady: the same, reading and comparing the existing "+
		"outputs, then writing the changed ones in place and one syncfs); ours/bound: how far ours is from it, "+
		"the speed target (tools/oacbench/README.md)")
	for _, r := range results {
		printBoundVerdict(w, r)
		printBoundParts(w, r)
	}
}

// printBoundVerdict says how far the bound is from the floor: what the
// template library and the decoding cost beyond the least any program
// must do. Issue 34 wants the fresh bound's ratio not to grow.
func printBoundVerdict(w io.Writer, r caseResult) {
	if len(r.bound) == 0 || len(r.floor) == 0 {
		return
	}
	bd, f := median(r.bound), median(r.floor)
	fmt.Fprintf(w, "%s: bound %.1f ms = %s the floor\n", r.name, bd, formatRatio(ratio(bd, f)))
}
