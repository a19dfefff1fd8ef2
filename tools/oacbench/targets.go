package main

import (
	"io"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// printTargets writes the TARGET lines of one run (benchkit.Target): each
// case's ours/bound and the peak RSS of ours over the cases, named after
// the medium (disk or tmpfs), since make bench runs oacbench once on each.
func printTargets(w io.Writer, medium string, results []caseResult) {
	var oursPeak float64
	for _, r := range results {
		oursPeak = max(oursPeak, peakRSSMiB(r.ours))
		if t, ok := boundTarget(r, medium); ok {
			t.Print(w)
		}
	}
	if len(results) > 0 {
		benchkit.Target{Program: "os-apply-config", Name: "peak-rss-" + medium,
			Value: oursPeak, Unit: "MiB", Op: "<=", Goal: targetOursRSSMiB}.Print(w)
	}
}

// boundTarget is r's speed target, ours/bound, if r has a bound and a
// goal. Two decimals: at a goal of 1.3x, 1.34x must read as a miss.
func boundTarget(r caseResult, medium string) (benchkit.Target, bool) {
	goal, ok := boundGoal(r.name)
	if !ok || len(r.bound) == 0 {
		return benchkit.Target{}, false
	}
	return benchkit.Target{Program: "os-apply-config", Name: r.name + "-" + medium + "-over-bound",
		Value: ratio(median(r.ours), median(r.bound)), Unit: "x", Op: "<=", Goal: goal, Decimals: 2}, true
}

// medium is tmpfs or disk: what the figures' names say the workdir is on.
func medium(dir string) string {
	if fsType(dir) == "tmpfs" {
		return "tmpfs"
	}
	return "disk"
}
