package main

import (
	"fmt"
	"github.com/tripleo-go/agent/internal/benchkit"
	"io"
	"text/tabwriter"
)

// Targets from the project's issue. They are informational: a MISS does not
// change the exit status.
const (
	targetFreshRatio  = 10.0
	targetSteadyRatio = 40.0
	targetOursRSSMiB  = 20.0
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

// ratioTarget returns the speed-up target for a case.
func ratioTarget(name string) (float64, bool) {
	switch name {
	case "fresh":
		return targetFreshRatio, true
	case "steady":
		return targetSteadyRatio, true
	}
	return 0, false
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
	fmt.Fprintln(tw, "case\truns\tref median ms\tours median ms\tratio\tfloor ms\tceiling\tref peak RSS MiB\tours peak RSS MiB\ttarget")
	var oursPeak float64
	var ceilings []string
	for _, r := range results {
		refMs, oursMs := median(r.ref), median(r.ours)
		q := ratio(refMs, oursMs)
		oursPeak = max(oursPeak, peakRSSMiB(r.ours))
		floorMs, ceiling := "-", "-"
		var ceil float64
		if len(r.floor) > 0 {
			ceil = ratio(refMs, median(r.floor))
			floorMs, ceiling = fmt.Sprintf("%.1f", median(r.floor)), formatRatio(ceil)
		}
		target := "-"
		if want, ok := ratioTarget(r.name); ok {
			target = fmt.Sprintf("ratio >= %.0fx %s", want, passMiss(q >= want))
			if ceil > 0 && ceil < want {
				target += " (above the ceiling)"
				ceilings = append(ceilings, r.name)
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%s\t%s\t%.1f\t%.1f\t%s\n",
			r.name, len(r.ref), refMs, oursMs, formatRatio(q), floorMs, ceiling, peakRSSMiB(r.ref), peakRSSMiB(r.ours), target)
	}
	fmt.Fprintf(tw, "memory\t\t\t\t\t\t\t\t%.1f\tours peak RSS <= %.0f MiB %s\n",
		oursPeak, targetOursRSSMiB, passMiss(oursPeak <= targetOursRSSMiB))
	tw.Flush()
	fmt.Fprintln(w, "floor: the least any os-apply-config must spend here, timed in-process between the two programs "+
		"(fresh: create the output files and one syncfs; steady: read the templates, the outputs and the metadata); "+
		"ceiling = ref/floor, the best ratio any program could reach on this filesystem")
	for _, name := range ceilings {
		fmt.Fprintf(w, "%s: the target ratio is above this machine's ceiling; no program can meet it here\n", name)
	}
}
