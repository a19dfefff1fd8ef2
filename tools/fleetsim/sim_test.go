package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tripleo-go/agent/test/fleet"
)

func TestWindowAndShift(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	if w := window(s, time.Second, 6*time.Second, time.Second); len(w) != 5 || w[0] != 2 || w[2] != 4 || w[3] != 0 {
		t.Fatalf("window %v", w)
	}
	if w := window(s, 0, time.Second, 500*time.Millisecond); len(w) != 2 || w[1] != 2 {
		t.Fatalf("half-second buckets %v", w)
	}
	if f := from(s, 2); len(f) != 2 || f[0] != 3 {
		t.Fatalf("shifted %v", f)
	}
	if f := from(s, -1); len(f) != 5 || f[0] != 0 || f[1] != 1 {
		t.Fatalf("padded %v", f)
	}
}

// The reference's command notes "TIME \"version\": N" per run.
func TestReferenceRuns(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agent-00001"), 0o700)
	os.WriteFile(filepath.Join(dir, "agent-00001", "runs"), []byte("1700000000.250000000 \"version\": 0\n1700000030.5 \"version\": 2\ngarbage\n"), 0o644)
	runs := referenceRuns(dir, 3)
	if len(runs) != 2 || runs[0].Agent != 1 || runs[1].Version != 2 || runs[0].At.UnixMilli() != 1700000000250 {
		t.Fatalf("%+v", runs)
	}
}

// A phased fleet never leaves a second without a request; those seconds
// are counted as the machine's stalls.
func TestStalls(t *testing.T) {
	c := simConfig{interval: time.Second} // buckets of 1/30 s
	r := result{Requests: make([]float64, 30*recoveryEnd)}
	for i := range r.Requests {
		r.Requests[i] = 1
	}
	if n := stalls(c, r); n != 0 {
		t.Fatalf("%d stalls in a busy run", n)
	}
	r.Requests[30*startEnd+5], r.Requests[30*outageAt+1], r.Requests[30*outageEnd] = 0, 0, 0
	if n := stalls(c, r); n != 2 {
		t.Fatalf("%d stalls, want 2 (the outage's own silence does not count)", n)
	}
}

func TestMergeResults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	writeJSON(p, []result{{Variant: variant{Name: "a"}, Agents: 1}, {Variant: variant{Name: "b"}, Agents: 1}})
	got := mergeResults(p, []result{{Variant: variant{Name: "b"}, Agents: 2}, {Variant: variant{Name: "c"}, Agents: 2}})
	if len(got) != 3 || got[0].Variant.Name != "a" || got[1].Variant.Name != "b" || got[1].Agents != 2 {
		t.Fatalf("%+v", got)
	}
}

// A pushed fleet idles 10 minutes at 30 s, and its later phases move
// with it; the short run and the polling fleets keep the timeline.
func TestPushedFleetIdlesLonger(t *testing.T) {
	long, push := simConfig{interval: 30 * time.Second}, variant{Zaqar: true}
	x := idleExtra(long, push)
	// the window opens once the start settled, and lasts 10 minutes
	from := idleFrom(long, push)
	if got := seconds(long, int(ph(x, idleEnd))-from); got != 10*time.Minute || seconds(long, from) != 5*time.Minute {
		t.Fatalf("idle window from %s, %s long", seconds(long, from), got)
	}
	if idleFrom(long, variant{}) != startEnd || idleFrom(long, variant{Zaqar: true, Probes: 50}) != startEnd {
		t.Fatal("only the long pushed run settles longer")
	}
	if ph(x, startEnd) != startEnd || ph(x, outageAt) != outageAt+float64(x) {
		t.Fatalf("phases %v %v", ph(x, startEnd), ph(x, outageAt))
	}
	if idleExtra(simConfig{short: true}, push) != 0 || idleExtra(long, variant{}) != 0 {
		t.Fatal("only the long pushed run idles longer")
	}
}

// Each agent counts once per change: its first run of that version or a
// later one, within the window; an earlier version, a run before the
// change or after the window is a miss.
func TestPropagation(t *testing.T) {
	t0 := time.Unix(1000, 0)
	chs := []change{{version: 1, at: t0}, {version: 2, at: t0.Add(90 * time.Second)}}
	runs := []fleet.Run{
		{Agent: 0, At: t0.Add(2 * time.Second), Version: 1},
		{Agent: 0, At: t0.Add(time.Second), Version: 1}, // its first
		{Agent: 1, At: t0.Add(3 * time.Second), Version: 0},
		{Agent: 1, At: t0.Add(100 * time.Second), Version: 1}, // stale, and past change 1's window
		{Agent: 0, At: t0.Add(92 * time.Second), Version: 2},
		{Agent: 2, At: t0.Add(-time.Second), Version: 1}, // before the change
	}
	lat, missed, per := propagation(chs, runs, 3, 90*time.Second)
	slices.Sort(lat)
	if !slices.Equal(lat, []float64{1, 2}) || missed != 4 || len(per) != 2 || per[0].N != 1 || per[1].N != 1 {
		t.Fatalf("latencies %v, %d missed, per change %+v", lat, missed, per)
	}
}
