package benchkit

import (
	"bytes"
	"math"
	"testing"
)

// The line is the one form the summary reads; the verdict is on the
// figure as printed.
func TestTargetLine(t *testing.T) {
	tests := []struct {
		name string
		t    Target
		want string
	}{
		{"ratio to the floor", Target{Program: "os-apply-config", Name: "fresh-tmpfs-over-floor", Value: 2.84, Unit: "x", Op: "<=", Goal: 3},
			"TARGET os-apply-config/fresh-tmpfs-over-floor measured=2.8x goal=<=3x PASS"},
		{"over the goal", Target{Program: "os-apply-config", Name: "peak-rss", Value: 20.14, Unit: "MiB", Op: "<=", Goal: 20},
			"TARGET os-apply-config/peak-rss measured=20.1MiB goal=<=20MiB MISS"},
		{"rounded onto the goal passes", Target{Program: "p", Name: "f", Value: 3.04, Unit: "x", Op: "<=", Goal: 3},
			"TARGET p/f measured=3.0x goal=<=3x PASS"},
		{"at least", Target{Program: "os-refresh-config", Name: "200-scripts-ratio", Value: 16.2, Unit: "x", Op: ">=", Goal: 5},
			"TARGET os-refresh-config/200-scripts-ratio measured=16.2x goal=>=5x PASS"},
		{"strictly below, equal misses", Target{Program: "p", Name: "f", Value: 2, Unit: "s", Op: "<", Goal: 2},
			"TARGET p/f measured=2.0s goal=<2s MISS"},
		{"decimals, unit with a slash", Target{Program: "fleetsim", Name: "zaqar-push-idle", Value: 12.345, Unit: "req/agent-h", Op: "<=", Goal: 26.8, Decimals: 2},
			"TARGET fleetsim/zaqar-push-idle measured=12.35req/agent-h goal=<=26.8req/agent-h PASS"},
		{"no unit", Target{Program: "p", Name: "f", Value: 1, Op: ">", Goal: 0},
			"TARGET p/f measured=1.0 goal=>0 PASS"},
		{"not measured never passes", Target{Program: "p", Name: "f", Value: math.NaN(), Unit: "ms", Op: "<=", Goal: 1},
			"TARGET p/f measured=NaNms goal=<=1ms MISS"},
		{"infinite is not measured", Target{Program: "p", Name: "f", Value: math.Inf(1), Unit: "x", Op: ">=", Goal: 1},
			"TARGET p/f measured=NaNx goal=>=1x MISS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.t.Print(&b)
			if got := b.String(); got != tc.want+"\n" {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			p, ok := ParseTarget(tc.want)
			if !ok {
				t.Fatalf("the line does not parse back")
			}
			if p.ID() != tc.t.ID() || p.Measured != tc.t.MeasuredText() || p.Goal != tc.t.GoalText() || p.Verdict != tc.t.Verdict() {
				t.Errorf("parsed back as %+v", p)
			}
		})
	}
}

// Fields that would break the line are a bench's bug: it panics.
func TestTargetRefusesBadFields(t *testing.T) {
	for _, tc := range []Target{
		{Program: "os/apply", Name: "f", Op: "<="},
		{Program: "p", Name: "two words", Op: "<="},
		{Program: "", Name: "f", Op: "<="},
		{Program: "p", Name: "f", Op: "=="},
		{Program: "p", Name: "f", Op: "<=", Unit: "1x"},
		{Program: "p", Name: "f", Op: "<=", Unit: "Mi B"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v printed a line", tc)
				}
			}()
			_ = tc.String()
		}()
	}
}

// Other lines of a bench's output are not targets.
func TestParseTargetIgnoresOtherLines(t *testing.T) {
	for _, line := range []string{
		"",
		"fresh  7  641.2  305.1  2.1x  38.0  8.0x  16.9x  23.0  19.4  ours/floor <= 3x MISS",
		"TARGET os-apply-config/fresh measured=2.8x goal=<=3x",
		"TARGET os-apply-config/fresh measured=2.8x goal=~3x PASS",
		"TARGET fresh measured=2.8x goal=<=3x PASS",
		"# TARGET p/f measured=1.0x goal=<=3x PASS",
	} {
		if p, ok := ParseTarget(line); ok {
			t.Errorf("%q parsed as %+v", line, p)
		}
	}
	if p, ok := ParseTarget("  TARGET p/f measured=1.0x goal=<=3x PASS\r"); !ok || p.Verdict != "PASS" {
		t.Errorf("surrounding blanks: %+v %v", p, ok)
	}
	// test/e2e's TestDeploy logs its own-share target through t.Logf.
	p, ok := ParseTarget("        share.go:97: TARGET heat-config/own-share-heat measured=21ms goal=<=50ms PASS")
	if !ok || p.ID() != "heat-config/own-share-heat" || p.Measured != "21ms" || p.Goal != "<=50ms" {
		t.Errorf("t.Logf line: %+v %v", p, ok)
	}
}

// The memory goal is twice the input plus 32 MiB.
func TestMemTarget(t *testing.T) {
	got := MemTarget("os-collect-config", "mem-100MB-new-cache", 244.4, 100_000_000)
	want := "TARGET os-collect-config/mem-100MB-new-cache measured=244.4MiB goal=<=222.7MiB MISS"
	if got.String() != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !MemTarget("p", "f", 200, 100_000_000).Pass() {
		t.Error("200 MiB on a 100 MB input missed")
	}
}
