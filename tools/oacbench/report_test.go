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

// Speed is judged against the floor (ours/floor <= 3x); without a floor
// there is no speed verdict; memory has its own row.
func TestPrintReportTargets(t *testing.T) {
	var b bytes.Buffer
	printReport(&b, buildCorpus(1), []caseResult{
		{name: "fresh", ref: ms(1200), ours: ms(60), floor: ms(30)},  // 2x the floor
		{name: "steady", ref: ms(1200), ours: ms(40), floor: ms(10)}, // 4x the floor
		{name: "other", ref: ms(1200), ours: ms(40)},                 // no floor
	}, "tmpfs")
	out := b.String()
	for _, want := range []string{"ours/floor <= 3x PASS", "ours/floor <= 3x MISS", "ours peak RSS <= 20 MiB MISS", "1000 templates",
		"2.0x", "4.0x", "40.0x", "120.0x"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "ours/floor <= 3x") != 2 {
		t.Errorf("a case without a floor got a speed verdict:\n%s", out)
	}
}

// Each target is also one TARGET line, named by case and filesystem, for
// the summary of make bench; a case without a floor has none.
func TestPrintReportTargetLines(t *testing.T) {
	for fs, label := range map[string]string{"tmpfs": "tmpfs", "ext2/3/4": "disk", "xfs": "disk"} {
		var b bytes.Buffer
		printReport(&b, buildCorpus(1), []caseResult{
			{name: "fresh", ref: ms(1200), ours: ms(60), floor: ms(30)},
			{name: "steady", ref: ms(1200), ours: ms(19), floor: ms(5)},
			{name: "other", ref: ms(1200), ours: ms(40)},
		}, fs)
		var got []string
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "TARGET ") {
				got = append(got, line)
			}
		}
		want := []string{
			"TARGET os-apply-config/fresh-" + label + "-over-floor measured=2.0x goal=<=3x PASS",
			"TARGET os-apply-config/steady-" + label + "-over-floor measured=3.8x goal=<=3x MISS",
			"TARGET os-apply-config/peak-rss-" + label + " measured=60.0MiB goal=<=20MiB MISS",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: TARGET lines\n%s\nwant\n%s", fs, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
