// Command benchsummary is make bench's last step: it reads the TARGET
// lines (internal/testkit/benchkit.Target) of the whole output of the
// benches, and of any other harness's log given with it (make e2e's,
// make fleet's), and prints one table of every target with its verdict,
// then the count "N PASS, M MISS". Issue 25's targets that no line
// measured are listed too (expected.go), so the table covers them all.
//
// Usage: benchsummary FILE... (none: standard input). Exit status 0 with
// any verdict (targets are informational), 1 when a file cannot be read.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"text/tabwriter"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

func main() {
	var inputs []io.Reader
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchsummary:", err)
			os.Exit(1)
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	if len(inputs) == 0 {
		inputs = append(inputs, os.Stdin)
	}
	got, err := gather(io.MultiReader(inputs...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
	if err := summarize(os.Stdout, got, issueTargets); err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
}

// pushLine is what test/e2e's push test logs for one change on the lab's
// Zaqar (seconds), not a TARGET line: gather makes it one, the slowest
// change being the figure.
var pushLine = regexp.MustCompile(`(?:^|\s)PUSH change_to_command=([0-9]+(?:\.[0-9]+)?)s?(?:\s|$)`)

const pushID, pushGoal = "push-change-to-command-lab", 1.0

// gather reads the targets in the order they were printed; a target
// printed again (a bench run twice) keeps its place and its last figures.
func gather(r io.Reader) ([]benchkit.Parsed, error) {
	var out []benchkit.Parsed
	at := map[string]int{}
	add := func(p benchkit.Parsed) {
		if i, ok := at[p.ID()]; ok {
			out[i] = p
			return
		}
		at[p.ID()] = len(out)
		out = append(out, p)
	}
	slowestPush := -1.0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if p, ok := benchkit.ParseTarget(sc.Text()); ok {
			add(p)
		} else if m := pushLine.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			slowestPush = max(slowestPush, v)
		}
	}
	if slowestPush >= 0 {
		t := benchkit.Target{Program: "os-collect-config", Name: pushID, Value: slowestPush, Unit: "s",
			Op: "<=", Goal: pushGoal, Decimals: 2}
		add(benchkit.Parsed{Program: t.Program, Name: t.Name, Measured: t.MeasuredText(), Goal: t.GoalText(), Verdict: t.Verdict()})
	}
	return out, sc.Err()
}

// summarize prints the table: the measured targets in the order printed,
// then the issue's targets none of them matched.
func summarize(w io.Writer, got []benchkit.Parsed, want []expected) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tmeasured\tgoal\tverdict")
	count := map[string]int{}
	for _, p := range got {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ID(), p.Measured, p.Goal, p.Verdict)
		count[p.Verdict]++
	}
	for _, e := range want {
		if matchesAny(e.match, got) {
			continue
		}
		verdict := "NOT RUN (make bench measures it: a bench was skipped or failed)"
		if e.where != "" {
			verdict = "measured elsewhere: " + e.where
			count["elsewhere"]++
		} else {
			count["not run"]++
		}
		fmt.Fprintf(tw, "%s\t-\t%s\t%s\n", e.id, e.goal, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d PASS, %d MISS; %d measured elsewhere, %d not run\n",
		count["PASS"], count["MISS"], count["elsewhere"], count["not run"])
	return err
}

func matchesAny(globs []string, got []benchkit.Parsed) bool {
	for _, p := range got {
		for _, g := range globs {
			if ok, _ := path.Match(g, p.ID()); ok {
				return true
			}
		}
	}
	return false
}
