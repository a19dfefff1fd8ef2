package main

import (
	"bytes"
	"testing"
)

// One line per case with a floor, named after the case and the medium,
// and one for the peak RSS over the cases.
func TestPrintTargets(t *testing.T) {
	var b bytes.Buffer
	printTargets(&b, "tmpfs", []caseResult{
		{name: "fresh", ref: ms(1200), ours: ms(60), floor: ms(30)},  // 2x the floor
		{name: "steady", ref: ms(1200), ours: ms(40), floor: ms(10)}, // 4x the floor
		{name: "other", ref: ms(1200), ours: ms(40)},                 // no floor
	})
	want := "TARGET os-apply-config/fresh-tmpfs-over-floor measured=2.0x goal=<=3x PASS\n" +
		"TARGET os-apply-config/steady-tmpfs-over-floor measured=4.0x goal=<=3x MISS\n" +
		"TARGET os-apply-config/peak-rss-tmpfs measured=60.0MiB goal=<=20MiB MISS\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
	b.Reset()
	printTargets(&b, "disk", nil)
	if b.Len() != 0 {
		t.Errorf("no case, yet: %s", b.String())
	}
}
