package stats

import (
	"math"
	"sync"
	"testing"
	"time"
)

func TestTimelineBuckets(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tl := NewTimeline(t0, time.Second)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); tl.Add(t0.Add(2500*time.Millisecond), 1) }()
	}
	wg.Wait()
	tl.Add(t0.Add(-time.Second), 7) // before the start: dropped
	tl.Add(t0, 2)
	tl.Add(t0.Add(999*time.Millisecond), 3)
	got := tl.Sums()
	want := []float64{5, 0, 100}
	if len(got) != len(want) {
		t.Fatalf("sums %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sums %v, want %v", got, want)
		}
	}
	w := tl.Window(2*time.Second, 5*time.Second)
	if len(w) != 3 || w[0] != 100 || w[1] != 0 || w[2] != 0 {
		t.Fatalf("window %v", w)
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buckets []float64
		want    Spread
	}{
		{"even", []float64{10, 10, 10, 10}, Spread{Mean: 10, Busiest: 10, Ratio: 1}},
		// a fleet polling in step every 30 s: the whole fleet in one second
		{"lock-step", append([]float64{300}, make([]float64, 29)...), Spread{Mean: 10, Busiest: 300, Ratio: 30}},
		{"empty", nil, Spread{}},
		{"all zero", []float64{0, 0}, Spread{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SpreadOf(tc.buckets); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3} // unsorted on purpose
	for p, want := range map[float64]float64{0: 1, 50: 3, 100: 5, 25: 2, 90: 4.6} {
		if got := Percentile(xs, p); math.Abs(got-want) > 1e-9 {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("percentile of nothing is a number")
	}
	s := Summarize([]float64{1, 2, 3, 4})
	if s.N != 4 || s.Mean != 2.5 || s.Max != 4 || s.P50 != 2.5 {
		t.Errorf("summary %+v", s)
	}
}
