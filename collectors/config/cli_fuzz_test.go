package config

import (
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// cliSeeds are command lines (one argument a line) for values.set():
// every kind of option, abbreviations, "=", grouped short forms,
// negative numbers, templates, "--", positional arguments.
var cliSeeds = []string{
	"-n\nx\n--key\nk\n--list\nb\n--list=c\n--rate=2\n--count\n4\n--on\n--grp-group-id\ng\np1\np2",
	"--na=abbreviated\n--noon\n--on",
	"-nvalue\n--count=-3\n--rate\n-0.5",
	"--name\n$count-${grp.group_id}\n--grp-group-id\n$$x \\$y $ z",
	"--name\n$nosuch",
	"--name",
	"--co\n1",
	"--count\nnot-a-number",
	"--on=yes",
	"--list\n--name\nx",
	"-h",
	"--version",
	"",
}

// cliArgs is a seed as arguments.
func cliArgs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// parseCLI parses args for values.set(), reading no file.
func parseCLI(args []string) (values, error) {
	var v values
	_, err := v.set().Parse(args, Env{Stdout: io.Discard, Root: "/nonexistent"})
	return v, err
}

// namesAFile reports an argument that would make Parse read a file the
// fuzzer chose (--config-file or --config-dir, or a prefix of them).
func namesAFile(args []string) bool {
	for _, a := range args {
		if k, _, _ := strings.Cut(a, "="); len(k) > 4 && (strings.HasPrefix("--config-file", k) || strings.HasPrefix("--config-dir", k)) {
			return true
		}
	}
	return false
}

// FuzzCommandLine parses a command line (one argument a line). A refused
// one is a usage error (its message one line after the usage), or a
// one-line error naming the option. With FUZZ_REFERENCE=1 each input is
// also parsed by oslo.config (checkCLI).
func FuzzCommandLine(f *testing.F) {
	for _, s := range cliSeeds {
		f.Add(s)
	}
	ref := difftest.FuzzReference(f, "testdata/cli_oracle.py", "oslo_config.cfg")
	f.Fuzz(func(t *testing.T, s string) {
		args := cliArgs(s)
		if namesAFile(args) {
			return
		}
		_, err := parseCLI(args)
		var ue *argparse.UsageError
		switch {
		case err == nil, errors.Is(err, ErrExit):
		case errors.As(err, &ue):
			if strings.ContainsAny(ue.Msg, "\n\r") && !strings.ContainsAny(s, "\r") {
				t.Fatalf("usage error message is not one line: %q", ue.Msg)
			}
		default:
			var ce *Error
			if !errors.As(err, &ce) || strings.ContainsAny(ce.Option+ce.Source+ce.Reason, "\n\r") {
				t.Fatalf("error is not one line naming the option: %q", err)
			}
		}
		if ref != nil {
			checkCLI(t, ref, args)
		}
	})
}

// FuzzFlagValues writes values as flags, each "--opt=value" with "$"
// doubled, and reads them back unchanged.
func FuzzFlagValues(f *testing.F) {
	f.Add("x", "k", "a b", "-c", 3, 2.5, true, "pos")
	f.Add("", "$HOME", "${x}", "$$", -1, 0.0, false, "-")
	f.Add("é\t\n", "=", "--list", "", math.MaxInt32, 1e300, true, "--")
	f.Fuzz(func(t *testing.T, name, key, l1, l2 string, count int, rate float64, on bool, pos string) {
		esc := func(s string) string { return strings.ReplaceAll(s, "$", "$$") }
		if strings.Contains(name+key+l1+l2, `\$`) || math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
			return // \$ is a dollar sign to oslo.config; rate must not be negative
		}
		onFlag := "--noon"
		if on {
			onFlag = "--on"
		}
		args := []string{"--name=" + esc(name), "--key=" + esc(key), "--list=" + esc(l1), "--list=" + esc(l2),
			"--count=" + strconv.Itoa(count), "--rate=" + strconv.FormatFloat(rate, 'g', -1, 64), onFlag}
		want := values{Name: name, Key: keyOf(key), List: []string{l1, l2}, Rate: rate, Count: count, On: on, GroupID: ""}
		if pos != "" && !strings.HasPrefix(pos, "-") && !strings.Contains(pos, "$") {
			args = append(args, pos)
			want.Any = []string{pos}
		}
		got, err := parseCLI(args)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q read as %+v, %v\nwant %+v", args, got, err, want)
		}
	})
}

// The reference's oslo.config over the seeds (checkCLI).
func TestCommandLineSeedsAgainstOsloConfig(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/cli_oracle.py", "oslo_config.cfg")
	n := 0
	for _, s := range cliSeeds {
		n += checkCLI(t, ref, cliArgs(s))
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzCommandLine") {
		n += checkCLI(t, ref, cliArgs(vals[0].(string)))
	}
	t.Logf("%d command lines compared", n)
}

// checkCLI parses args here and with oslo.config: the same values, or
// both refuse them. It returns 0 when not compared (an argument that is
// not text, an invalid value oslo.config lets through), else 1.
func checkCLI(t *testing.T, ref *difftest.Reference, args []string) int {
	t.Helper()
	for _, a := range args {
		if !utf8ValidNoNUL(a) {
			return 0
		}
		// argparse drops an attached "--" value and stores [] (a bug;
		// docs/compat.md).
		if strings.HasSuffix(a, "=--") || len(a) == 4 && a[0] == '-' && a[1] != '-' && a[2:] == "--" {
			return 0
		}
	}
	var want struct {
		Values map[string]any
		Error  string
	}
	if !ref.Query(t, map[string]any{"args": args}, &want) {
		return 0
	}
	got, err := parseCLI(args)
	var ce *Error
	if errors.As(err, &ce) && (ce.Reason == "must not be negative" || strings.TrimSpace(ce.Value) == "") {
		// Our own rule; an empty (or blank) number is None to oslo.config, a
		// traceback later in the reference, an invalid value here
		// (docs/compat.md).
		return 0
	}
	switch {
	case want.Error != "" && err == nil:
		t.Errorf("%q: oslo.config refuses it (%s), we read %+v", args, want.Error, got)
	case want.Error == "" && err != nil:
		t.Errorf("%q: refused (%v), oslo.config reads %v", args, err, want.Values)
	case err == nil:
		w := want.Values
		ours := map[string]any{
			"DEFAULT.name": got.Name, "DEFAULT.key": got.Key.Reveal(), "DEFAULT.list": anyList(got.List),
			"DEFAULT.rate": got.Rate, "DEFAULT.count": float64(got.Count), "DEFAULT.on": got.On,
			"DEFAULT.any": anyList(got.Any), "grp.group_id": got.GroupID,
		}
		for k, v := range w {
			if v == nil && (ours[k] == "" || ours[k] == nil) {
				continue // unset: None there, the zero value here
			}
			if !reflect.DeepEqual(ours[k], v) {
				t.Errorf("%q: %s = %#v, oslo.config %#v", args, k, ours[k], v)
			}
		}
	}
	return 1
}

func keyOf(s string) secret.String { return secret.String(s) }

func anyList(ss []string) any {
	if ss == nil {
		return nil
	}
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// utf8ValidNoNUL is an argument Python gets as text.
func utf8ValidNoNUL(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }
