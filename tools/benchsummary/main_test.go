package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// A make bench output with a target printed twice (the last wins, in the
// first's place), a t.Logf-prefixed target from make e2e, two push
// figures from it (the slowest is the figure), make fleet's idle lines,
// its -short p99 (an INFO line, no row), an old fleet log's p99 of
// whole daemons (a row of its own: the fleet's p99 row, the probes',
// stays elsewhere) and a malformed line (ignored): the table lists what
// was measured, then the issue's targets nothing measured, and the count.
func TestSummary(t *testing.T) {
	in, err := os.Open("testdata/bench.log")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err := gather(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := summarize(&b, got, issueTargets); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/bench.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// Nothing printed: every issue target is listed, none counted as a verdict.
func TestSummaryOfNothing(t *testing.T) {
	var b bytes.Buffer
	if err := summarize(&b, nil, issueTargets); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("0 PASS, 0 MISS; 5 measured elsewhere, 9 not run\n")) {
		t.Errorf("got\n%s", b.String())
	}
}

// The fleet's p99 row is the probes variant's: whole daemons' p99, the
// short run's or any other name does not measure it.
func TestFleetP99Row(t *testing.T) {
	var row expected
	for _, e := range issueTargets {
		if e.id == "os-collect-config/fleet-push-change-to-command-p99-probes" {
			row = e
		}
	}
	tests := []struct {
		name string
		want bool
	}{
		{"fleet-push-change-to-command-p99-probes", true},
		{"fleet-push-change-to-command-p99-probes-1000-agents", true},
		{"fleet-push-change-to-command-p99", false},
		{"fleet-push-change-to-command-p99-2000-agents", false},
		{"fleet-push-change-to-command-p99-short", false},
	}
	for _, tc := range tests {
		got := matchesAny(row.match, []benchkit.Parsed{{Program: "os-collect-config", Name: tc.name}})
		if got != tc.want {
			t.Errorf("%s: matched %v, want %v", tc.name, got, tc.want)
		}
	}
}
