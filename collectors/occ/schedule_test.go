package occ

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// fixed returns the numbers in turn, then the last for ever.
func fixed(xs ...float64) func() float64 {
	i := 0
	return func() float64 {
		x := xs[min(i, len(xs)-1)]
		i++
		return x
	}
}

// pass is a pass for the schedule: whether it changed something, and how
// long it took.
type pass struct {
	changed bool
	took    time.Duration
}

func TestScheduleSleeps(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	idle, change := pass{}, pass{changed: true}
	hung := func(d time.Duration) pass { return pass{took: d} }
	for _, tc := range []struct {
		name   string
		jitter bool
		rand   float64 // every draw
		passes []pass
		want   []time.Duration
	}{
		{"without jitter: the reference's ramp, reset by a change; a pass's time adds", false, 0.5,
			[]pass{change, idle, idle, idle, idle, idle, hung(20 * s), idle, change, idle},
			[]time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s, 1 * s, 2 * s}},
		{"ramp sleeps are between half and all of their length", true, 0.5,
			[]pass{change, idle, idle, idle, idle},
			[]time.Duration{750 * ms, 1500 * ms, 3 * s, 6 * s, 12 * s}},
		{"the first full interval draws the phase, the next ones keep it", true, 0.75,
			[]pass{change, idle, idle, idle, idle, idle, idle, idle},
			[]time.Duration{625 * ms, 1250 * ms, 2500 * ms, 5 * s, 10 * s, 7500 * ms, 30 * s, 30 * s}},
		{"a change ramps and draws the phase again", true, 0.75,
			[]pass{idle, idle, idle, idle, idle, idle, idle, change, idle, idle, idle, idle, idle, idle},
			[]time.Duration{625 * ms, 1250 * ms, 2500 * ms, 5 * s, 10 * s, 7500 * ms, 30 * s,
				625 * ms, 1250 * ms, 2500 * ms, 5 * s, 10 * s, 7500 * ms, 30 * s}},
		{"a long pass does not move the phase; a start in the past is skipped", true, 0.75,
			[]pass{idle, idle, idle, idle, idle, idle, hung(20 * s), hung(45 * s), idle, hung(60 * s), idle},
			[]time.Duration{625 * ms, 1250 * ms, 2500 * ms, 5 * s, 10 * s, 7500 * ms, 10 * s, 15 * s, 30 * s, 30 * s, 30 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := newSchedule(1*s, 30*s, tc.jitter, fixed(tc.rand))
			now := time.Unix(1e9, 0)
			var got []time.Duration
			for _, p := range tc.passes {
				now = now.Add(p.took)
				d := sc.sleep(p.changed, now)
				got = append(got, d)
				now = now.Add(d)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v", got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("sleeps %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// A pass woken early (a local source changed) keeps the planned one.
func TestScheduleWokenEarly(t *testing.T) {
	sc := newSchedule(30*time.Second, 30*time.Second, true, fixed(0.5))
	now := time.Unix(1e9, 0)
	if d := sc.sleep(false, now); d != 15*time.Second {
		t.Fatalf("phase %v", d)
	}
	now = now.Add(5 * time.Second) // woken 10 s before the planned pass
	if d := sc.sleep(true, now); d <= 0 || d > 30*time.Second {
		t.Fatalf("after a change: %v", d)
	}
	sc = newSchedule(30*time.Second, 30*time.Second, true, fixed(0.5))
	sc.sleep(false, now)                                                   // planned at now+15s
	if d := sc.sleep(false, now.Add(5*time.Second)); d != 10*time.Second { // woken, nothing changed
		t.Fatalf("woken early without a change: sleeps %v, want the 10 s left", d)
	}
}

// However the draws fall and the passes last, no sleep is longer than the
// reference's, so no node sees a change later.
func TestScheduleNeverLater(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for run := 0; run < 200; run++ {
		sc := newSchedule(time.Second, 30*time.Second, true, r.Float64)
		ref := newSchedule(time.Second, 30*time.Second, false, nil)
		now := time.Unix(1e9, 0)
		for i := 0; i < 50; i++ {
			changed := r.IntN(10) == 0
			now = now.Add(time.Duration(r.Int64N(int64(40 * time.Second))))
			got, want := sc.sleep(changed, now), ref.sleep(changed, now)
			if got <= 0 || got > want {
				t.Fatalf("run %d pass %d: slept %v, the reference %v", run, i, got, want)
			}
			now = now.Add(got)
		}
	}
}

// The daemon's loop follows the schedule on its clock (Env.After and
// Env.Now), and RunCommand, when set, runs instead of the command with the
// files of OS_CONFIG_FILES.
func TestDaemonSleepsFollowTheSchedule(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"a": 1}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sleeps []time.Duration
	var files [][]string
	now := time.Unix(1e9, 0)
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Rand: fixed(0.5),
		RunCommand: func(_ context.Context, f []string) int { files = append(files, f); return 0 },
		Now:        func() time.Time { return now },
		After: func(d time.Duration) <-chan time.Time {
			sleeps = append(sleeps, d)
			now = now.Add(d)
			if len(sleeps) == 8 {
				cancel()
				return nil
			}
			return elapsed()
		}}
	Run(ctx, []string{"--config-file", "/dev/null", "-c", "exit 3", "--cachedir", dir + "/cache", "--backup-cachedir", dir + "/backup",
		"--request-metadata-url", srv.URL, "request"}, env)
	const s = time.Second
	want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * s, 6 * s, 12 * s, 15 * s, 30 * s, 30 * s}
	if len(files) != 1 || len(files[0]) != 1 || files[0][0] != dir+"/cache/request.json" {
		t.Fatalf("RunCommand got %v, want one run with request.json", files)
	}
	if len(sleeps) != len(want) {
		t.Fatalf("sleeps %v, want %v", sleeps, want)
	}
	for i := range want {
		if sleeps[i] != want[i] {
			t.Fatalf("sleeps %v, want %v", sleeps, want)
		}
	}
}
