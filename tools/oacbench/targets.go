package main

import (
	"io"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// printTargets writes the TARGET lines of one run (benchkit.Target): each
// case's ours/floor and the peak RSS of ours over the cases, named after
// the medium (disk or tmpfs), since make bench runs oacbench once on each.
func printTargets(w io.Writer, medium string, results []caseResult) {
	var oursPeak float64
	for _, r := range results {
		oursPeak = max(oursPeak, peakRSSMiB(r.ours))
		if len(r.floor) == 0 {
			continue
		}
		benchkit.Target{Program: "os-apply-config", Name: r.name + "-" + medium + "-over-floor",
			Value: ratio(median(r.ours), median(r.floor)), Unit: "x", Op: "<=", Goal: targetOverFloor}.Print(w)
	}
	if len(results) > 0 {
		benchkit.Target{Program: "os-apply-config", Name: "peak-rss-" + medium,
			Value: oursPeak, Unit: "MiB", Op: "<=", Goal: targetOursRSSMiB}.Print(w)
	}
}

// medium is tmpfs or disk: what the figures' names say the workdir is on.
func medium(dir string) string {
	if fsType(dir) == "tmpfs" {
		return "tmpfs"
	}
	return "disk"
}
