package status

import (
	"reflect"
	"strings"
	"testing"
)

// Every spelling the command line had under argparse parses to the same
// options with flag: "--opt value", "--opt=value", both names of -o.
func TestCommandLineSpellings(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  options
		given []string
	}{
		{args: nil, want: options{}},
		{args: []string{"--format", "json", "--wait", "--timeout", "5"}, want: options{format: "json", wait: true, timeout: "5"}, given: []string{"--format", "--wait", "--timeout"}},
		{args: []string{"--format=text"}, want: options{format: "text"}, given: []string{"--format"}},
		{args: []string{"--collect-logs", "-o", "b.tgz"}, want: options{collectLogs: true, output: "b.tgz"}, given: []string{"--collect-logs", "--output"}},
		{args: []string{"--collect-logs", "--output=b.tgz"}, want: options{collectLogs: true, output: "b.tgz"}, given: []string{"--collect-logs", "--output"}},
		{args: []string{"-h"}, want: options{help: true}},
		{args: []string{"--help"}, want: options{help: true}},
		{args: []string{"--version"}, want: options{version: true}},
	} {
		got, err := CLI().parse(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		for _, g := range tc.given {
			if !got.given[g] {
				t.Errorf("%q: %s not marked given", tc.args, g)
			}
		}
		if len(got.given) != len(tc.given) {
			t.Errorf("%q: given %v, want %v", tc.args, got.given, tc.given)
		}
		got.given = nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}

// Usage errors keep argparse's words.
func TestCommandLineErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--bogus":         "unrecognized arguments: --bogus",
		"-x":              "unrecognized arguments: -x",
		"extra":           "unrecognized arguments: extra",
		"--format":        "argument --format: expected one argument",
		"--wait -o":       "argument -o: expected one argument",
		"--timeout 1 x y": "unrecognized arguments: x y",
	} {
		_, err := CLI().parse(strings.Fields(args))
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", args, err, want)
		}
	}
}

// The help lists every option, laid out as argparse's: the manual page
// and the completion (cmd/tripleo-agent) are made of the same list.
func TestHelpListsEveryOption(t *testing.T) {
	var b strings.Builder
	c := CLI()
	c.WriteHelp(&b)
	help := b.String()
	if !strings.HasPrefix(help, "usage: tripleo-agent-status [-h] [--version] [--format {text,json}] [--wait]\n                            [--timeout SECONDS]") {
		t.Errorf("usage:\n%s", help)
	}
	for _, o := range c.Options {
		if !strings.Contains(help, "\n  "+o.spelling()) {
			t.Errorf("help does not list %s:\n%s", o.spelling(), help)
		}
	}
	for _, l := range strings.Split(help, "\n") {
		if len(l) > 80 {
			t.Errorf("line over 80 columns: %q", l)
		}
	}
}
