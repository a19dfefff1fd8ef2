package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func ms(vals ...int) []sample {
	ss := make([]sample, len(vals))
	for i, v := range vals {
		ss[i] = sample{Wall: time.Duration(v) * time.Millisecond, MaxRSS: int64(v) * 1024}
	}
	return ss
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []sample
		want float64
	}{
		{"empty", nil, 0},
		{"one", ms(5), 5},
		{"odd unsorted", ms(9, 1, 5), 5},
		{"even averages the middle pair", ms(4, 1, 10, 2), 3},
		{"outlier ignored", ms(10, 11, 12, 13, 5000), 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.in); got != tc.want {
				t.Errorf("median = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		ref, ours float64
		want      string
	}{
		{1170, 50, "23.4x"},
		{100, 100, "1.0x"},
		{50, 100, "0.5x"},
		{100, 0, "0.0x"}, // no division by zero
	}
	for _, tc := range tests {
		if got := formatRatio(ratio(tc.ref, tc.ours)); got != tc.want {
			t.Errorf("ratio(%v, %v) = %s, want %s", tc.ref, tc.ours, got, tc.want)
		}
	}
}

func TestPeakRSS(t *testing.T) {
	if got := peakRSSMiB(ms(3, 40, 7)); got != 40 {
		t.Errorf("peak = %v MiB, want 40", got)
	}
}

// Speed is judged against the bound (fresh: ours/bound <= 1.5x, steady:
// <= 1.3x); ours/floor is only a figure; without a bound there is no
// speed verdict; memory has its own row.
func TestPrintReportTargets(t *testing.T) {
	var b bytes.Buffer
	printReport(&b, buildCorpus(1), []caseResult{
		{name: "fresh", ref: ms(1200), ours: ms(60), floor: ms(30), bound: ms(40)},  // 1.5x the bound
		{name: "steady", ref: ms(1200), ours: ms(40), floor: ms(10), bound: ms(30)}, // 1.33x the bound
		{name: "other", ref: ms(1200), ours: ms(40), floor: ms(10)},                 // no bound
	})
	out := b.String()
	for _, want := range []string{"ours/bound <=1.5x PASS", "ours/bound <=1.3x MISS", "1.33x", "ours peak RSS <= 20 MiB MISS", "1000 templates",
		"2.0x", "4.0x", "40.0x", "120.0x"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "ours/bound <=") != 2 || strings.Contains(out, "ours/floor <=") {
		t.Errorf("a case without a bound got a speed verdict, or the floor one:\n%s", out)
	}
}
