// Package benchkit measures whole-process runs for the side-by-side
// benchmarks (make bench): wall time and peak RSS of a child, medians and
// ratios.
package benchkit

import (
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// Sample is one timed run of one program.
type Sample struct {
	Wall   time.Duration
	MaxRSS int64 // KiB, from getrusage of the child
}

// Run runs cmd to completion and measures it.
func Run(cmd *exec.Cmd) (Sample, error) {
	start := time.Now()
	err := cmd.Run()
	s := Sample{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.MaxRSS = ru.Maxrss // KiB on Linux
		}
	}
	return s, err
}

// Median of the wall times in milliseconds; the middle pair is averaged for
// an even count. Median rather than mean: one run disturbed by the page
// cache or a noisy neighbour should not move the figure.
func Median(ss []Sample) float64 {
	if len(ss) == 0 {
		return 0
	}
	ms := make([]float64, len(ss))
	for i, s := range ss {
		ms[i] = float64(s.Wall) / float64(time.Millisecond)
	}
	slices.Sort(ms)
	mid := len(ms) / 2
	if len(ms)%2 == 0 {
		return (ms[mid-1] + ms[mid]) / 2
	}
	return ms[mid]
}

// PeakRSSMiB is the largest max-RSS over the runs.
func PeakRSSMiB(ss []Sample) float64 {
	var peak int64
	for _, s := range ss {
		peak = max(peak, s.MaxRSS)
	}
	return float64(peak) / 1024
}

// Ratio is how many times faster ours is than the reference (ref/ours).
func Ratio(ref, ours float64) float64 {
	if ours <= 0 {
		return 0
	}
	return ref / ours
}

// Alternate times sides (the reference, ours, ...) in turn, round after
// round, so that a slow spell of the machine falls on all of them:
// round 0 warms the caches up (and is where run checks the outputs) and
// is not kept; rounds 1..runs give each side's samples, in side order.
func Alternate(runs, sides int, run func(round, side int) (Sample, error)) ([][]Sample, error) {
	out := make([][]Sample, sides)
	for r := 0; r <= runs; r++ {
		for s := 0; s < sides; s++ {
			sample, err := run(r, s)
			if err != nil {
				return nil, err
			}
			if r > 0 {
				out[s] = append(out[s], sample)
			}
		}
	}
	return out, nil
}
