package main

import (
	"bytes"
	"os"
	"testing"
)

// A make bench output with a target printed twice (the last wins, in the
// first's place), a t.Logf-prefixed target from make e2e, two push
// figures from it (the slowest is the figure), make fleet's idle line and
// its -short p99 (a row of its own: the 10,000 agents' row stays
// elsewhere) and a malformed line (ignored): the table lists what was
// measured, then the issue's targets nothing measured, and the count.
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
