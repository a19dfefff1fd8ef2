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
			boundMs, overBound = fmt.Sprintf("%.1f", bd), formatRatio(ratio(oursMs, bd))
		}
		if len(r.floor) > 0 {
			f := median(r.floor)
			over := ratio(oursMs, f)
			floorMs, overFloor, ceiling = fmt.Sprintf("%.1f", f), formatRatio(over), formatRatio(ratio(refMs, f))
			target = fmt.Sprintf("ours/floor <= %.0fx %s", targetOverFloor, passMiss(over <= targetOverFloor))
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
		"render the templates, then the floor's writes); ours/bound: how far ours is from it")
	for _, r := range results {
		printBoundVerdict(w, r)
		printBoundParts(w, r)
	}
}

// printBoundVerdict says whether the bound leaves room for the target:
// if even the bound is above it, no os-apply-config on the required
// template library can meet it here, however fast the rest of ours gets.
// Below it, the target is only not ruled out: a lower bound promises
// nothing.
func printBoundVerdict(w io.Writer, r caseResult) {
	if len(r.bound) == 0 || len(r.floor) == 0 {
		return
	}
	bd, f := median(r.bound), median(r.floor)
	over := ratio(bd, f)
	verdict := "an os-apply-config built on cbroglie/mustache may"
	if over > targetOverFloor {
		verdict = "no os-apply-config built on cbroglie/mustache can"
	}
	fmt.Fprintf(w, "%s: bound %.1f ms = %s the floor: %s reach %.0fx the floor here\n",
		r.name, bd, formatRatio(over), verdict, targetOverFloor)
}
