package main

import (
	"bytes"
	"testing"
)

// One line per case with a bound, named after the case and the medium,
// with the case's goal (fresh 1.5x, steady 1.3x the bound), and one for
// the peak RSS over the cases. ours/floor is no target.
func TestPrintTargets(t *testing.T) {
	var b bytes.Buffer
	printTargets(&b, "tmpfs", []caseResult{
		{name: "fresh", ref: ms(1200), ours: ms(60), floor: ms(10), bound: ms(42)},  // 1.43x the bound
		{name: "steady", ref: ms(1200), ours: ms(40), floor: ms(10), bound: ms(30)}, // 1.33x the bound
		{name: "fresh", ref: ms(1200), ours: ms(40), floor: ms(10)},                 // no bound
		{name: "other", ref: ms(1200), ours: ms(40), floor: ms(10), bound: ms(10)},  // no goal
	})
	want := "TARGET os-apply-config/fresh-tmpfs-over-bound measured=1.43x goal=<=1.5x PASS\n" +
		"TARGET os-apply-config/steady-tmpfs-over-bound measured=1.33x goal=<=1.3x MISS\n" +
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
