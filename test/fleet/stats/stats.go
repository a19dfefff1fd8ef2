// Package stats is the arithmetic of the fleet simulation: events counted
// per second, the busiest second against the mean, and percentiles.
package stats

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Timeline counts events (or adds amounts, such as bytes) in buckets of
// equal width from Start. It is safe for concurrent use.
type Timeline struct {
	Start  time.Time
	Bucket time.Duration

	mu   sync.Mutex
	sums []float64
}

// NewTimeline is an empty timeline.
func NewTimeline(start time.Time, bucket time.Duration) *Timeline {
	return &Timeline{Start: start, Bucket: bucket}
}

// Add adds v to the bucket of at; what falls before Start is dropped.
func (t *Timeline) Add(at time.Time, v float64) {
	d := at.Sub(t.Start)
	if d < 0 {
		return
	}
	i := int(d / t.Bucket)
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= len(t.sums) {
		t.sums = append(t.sums, make([]float64, i+1-len(t.sums))...)
	}
	t.sums[i] += v
}

// Sums is a copy of every bucket, up to the last one that got anything.
func (t *Timeline) Sums() []float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.sums)
}

// Window is the buckets that cover [from, to) after Start, zeros where
// nothing happened.
func (t *Timeline) Window(from, to time.Duration) []float64 {
	all := t.Sums()
	a, b := int(from/t.Bucket), int(to/t.Bucket)
	out := make([]float64, max(b-a, 0))
	for i := range out {
		if a+i >= 0 && a+i < len(all) {
			out[i] = all[a+i]
		}
	}
	return out
}

// Spread is how evenly a series of buckets is filled.
type Spread struct {
	Mean, Busiest float64
	// Ratio is Busiest / Mean (0 for an empty series).
	Ratio float64
}

// SpreadOf is the spread of buckets.
func SpreadOf(buckets []float64) Spread {
	if len(buckets) == 0 {
		return Spread{}
	}
	var s Spread
	for _, v := range buckets {
		s.Mean += v
		s.Busiest = max(s.Busiest, v)
	}
	s.Mean /= float64(len(buckets))
	if s.Mean > 0 {
		s.Ratio = s.Busiest / s.Mean
	}
	return s
}

// Sum adds the buckets.
func Sum(buckets []float64) float64 {
	var s float64
	for _, v := range buckets {
		s += v
	}
	return s
}

// Percentile is the p-th percentile (0 to 100) of xs by linear
// interpolation between closest ranks; NaN for no data.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	hi := int(math.Ceil(r))
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

// Summary is a distribution in brief.
type Summary struct {
	N                        int
	Mean, P50, P90, P99, Max float64
}

// Summarize summarizes xs.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	s.Mean = Sum(xs) / float64(len(xs))
	s.P50, s.P90, s.P99 = Percentile(xs, 50), Percentile(xs, 90), Percentile(xs, 99)
	s.Max = slices.Max(xs)
	return s
}
