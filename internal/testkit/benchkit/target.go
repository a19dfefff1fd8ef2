package benchkit

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Target is one figure a bench checks against a goal. Every bench prints
// its targets through it, as one line of one form, so that the summary of
// make bench (tools/benchsummary) can gather them from the whole output:
//
//	TARGET os-apply-config/fresh-tmpfs-over-floor measured=2.8x goal=<=3x PASS
//
// Targets are informational: a MISS is printed, never an error.
type Target struct {
	Program string  // the program measured, e.g. os-apply-config
	Name    string  // the figure, e.g. fresh-tmpfs-over-floor
	Value   float64 // what was measured
	Unit    string  // of Value and Goal, e.g. x, MiB, ms; may be empty
	Op      string  // <=, >=, < or >
	Goal    float64
	// Decimals of Value as printed (default 1). The verdict is on the
	// printed figure, so that a line never reads "3.0x goal=<=3x MISS".
	Decimals int
}

// ops are the comparisons a goal may use.
var ops = map[string]func(v, goal float64) bool{
	"<=": func(v, g float64) bool { return v <= g },
	">=": func(v, g float64) bool { return v >= g },
	"<":  func(v, g float64) bool { return v < g },
	">":  func(v, g float64) bool { return v > g },
}

// Pass tells whether the measured figure, as printed, meets the goal.
func (t Target) Pass() bool {
	cmp, ok := ops[t.Op]
	if !ok {
		return false
	}
	v, _ := strconv.ParseFloat(t.measured(), 64)
	return !math.IsNaN(v) && cmp(v, t.Goal)
}

// Verdict is PASS or MISS.
func (t Target) Verdict() string {
	if t.Pass() {
		return "PASS"
	}
	return "MISS"
}

func (t Target) measured() string {
	if math.IsInf(t.Value, 0) || math.IsNaN(t.Value) {
		return "NaN" // nothing measured (a ratio to a zero): never a pass
	}
	d := t.Decimals
	if d <= 0 {
		d = 1
	}
	return strconv.FormatFloat(t.Value, 'f', d, 64)
}

// ID is program/name, the target's key in the summary.
func (t Target) ID() string { return t.Program + "/" + t.Name }

// MeasuredText and GoalText are the two figures with their unit, as the
// line and the summary's table show them.
func (t Target) MeasuredText() string { return t.measured() + t.Unit }
func (t Target) GoalText() string {
	return t.Op + strconv.FormatFloat(t.Goal, 'f', -1, 64) + t.Unit
}

// String is the TARGET line, without its newline. A target whose fields
// would break the line's form (a space, a "/" in the program, an unknown
// operator) is a bug in the bench: it panics rather than print a line the
// summary would misread.
func (t Target) String() string {
	if err := t.check(); err != nil {
		panic(err)
	}
	return fmt.Sprintf("TARGET %s measured=%s goal=%s %s", t.ID(), t.MeasuredText(), t.GoalText(), t.Verdict())
}

// Print writes the TARGET line.
func (t Target) Print(w io.Writer) {
	fmt.Fprintln(w, t.String())
}

func (t Target) check() error {
	bad := func(s string) bool { return s == "" || strings.ContainsAny(s, " \t\n") }
	switch {
	case bad(t.Program) || strings.Contains(t.Program, "/"):
		return fmt.Errorf("benchkit: target program %q: want one word without /", t.Program)
	case bad(t.Name):
		return fmt.Errorf("benchkit: target %s: name %q: want one word", t.Program, t.Name)
	case strings.ContainsAny(t.Unit, " \t\n") || strings.IndexAny(t.Unit, "0123456789.-") == 0:
		return fmt.Errorf("benchkit: target %s: unit %q: want no space, and no digit, dot or minus first", t.ID(), t.Unit)
	case ops[t.Op] == nil:
		return fmt.Errorf("benchkit: target %s: operator %q: want <=, >=, < or >", t.ID(), t.Op)
	}
	return nil
}

// targetLine is the form String writes; the unit is what follows the
// number up to the next space, the same after measured= and goal=.
var targetLine = regexp.MustCompile(`^TARGET ([^/\s]+)/(\S+) measured=(-?[0-9]+(?:\.[0-9]+)?|NaN)(\S*) goal=(<=|>=|<|>)(-?[0-9]+(?:\.[0-9]+)?)(\S*) (PASS|MISS)$`)

// Parsed is a TARGET line read back, its figures as the bench printed
// them.
type Parsed struct {
	Program, Name  string
	Measured, Goal string // with their unit, Goal with its operator
	Verdict        string // PASS or MISS
}

// ID is program/name.
func (p Parsed) ID() string { return p.Program + "/" + p.Name }

// logPrefix is what go test's t.Logf puts before a line (test/e2e logs
// its targets so).
var logPrefix = regexp.MustCompile(`^[\w.-]+\.go:[0-9]+: `)

// ParseTarget reads one TARGET line (surrounding blanks and a t.Logf
// prefix ignored). ok is false for any other line, so a whole log can be
// fed to it line by line.
func ParseTarget(line string) (p Parsed, ok bool) {
	line = logPrefix.ReplaceAllString(strings.TrimSpace(line), "")
	m := targetLine.FindStringSubmatch(line)
	if m == nil {
		return Parsed{}, false
	}
	return Parsed{Program: m[1], Name: m[2], Measured: m[3] + m[4], Goal: m[5] + m[6] + m[7], Verdict: m[8]}, true
}

// MiB is a byte count in MiB.
func MiB(bytes int64) float64 { return float64(bytes) / (1 << 20) }

// MemTarget is the memory target for a program run on a large
// input: its peak RSS no more than twice the input plus 32 MiB (the
// runtime's and the program's own baseline).
func MemTarget(program, name string, peakMiB float64, inputBytes int64) Target {
	goal := math.Round((2*MiB(inputBytes)+32)*10) / 10
	return Target{Program: program, Name: name, Value: peakMiB, Unit: "MiB", Op: "<=", Goal: goal}
}
