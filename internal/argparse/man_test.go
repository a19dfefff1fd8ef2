package argparse

import (
	"bytes"
	"strings"
	"testing"
)

func manParser() *Parser {
	return &Parser{
		Prog: "prog", Description: "Does one thing.\n\nAnd another.", Version: "1.0", Columns: 60,
		Positional: "items", PositionalHelp: "what to work on",
		Options: []*Option{
			{Names: []string{"-t", "--templates"}, Kind: One, Metavar: "DIR", Help: "a directory whose files are read, one after the other, in sorted order"},
			{Names: []string{"--zaqar-queue"}, Kind: One, Help: "the queue", Group: "zaqar options"},
		},
		Manual: Manual{Summary: "do things", Sections: []Section{
			{Title: "Environment", Items: []Item{{Tag: "PROG_DIR", Text: "where \\ things are"}}},
			{Title: "Exit status", Paragraphs: []string{".5 is not a status"}},
		}},
	}
}

// The help wraps each option's words in the columns left by the
// 24-column margin, and puts grouped options under their title.
func TestHelpWrapsAndGroups(t *testing.T) {
	want := `usage: prog [-h] [--version] [-t DIR]
            [--zaqar-queue ZAQAR_QUEUE] [items ...]

Does one thing.

And another.

positional arguments:
  items                 what to work on

options:
  -h, --help            show this help message and exit
  --version             show the version and exit
  -t DIR, --templates DIR
                        a directory whose files are read,
                        one after the other, in sorted
                        order

zaqar options:
  --zaqar-queue ZAQAR_QUEUE
                        the queue
`
	if got := manParser().Help(); got != want {
		t.Errorf("help:\n%s\nwant:\n%s", got, want)
	}
}

// The manual page has every option of the help, escaped for roff, and
// the manual's own sections.
func TestManPage(t *testing.T) {
	page := manParser().Man("2026-11-25", "tripleo-agent 1.0-1")
	for _, want := range []string{
		".TH \"PROG\" 1 \"2026-11-25\" \"tripleo-agent 1.0-1\" \"User Commands\"\n.nh\n.ad l\n",
		".SH NAME\nprog \\- do things\n",
		".SH SYNOPSIS\n.B prog\n[\\-h] [\\-\\-version] [\\-t DIR] [\\-\\-zaqar\\-queue ZAQAR_QUEUE] [items ...]\n",
		".SH DESCRIPTION\nDoes one thing.\n.PP\nAnd another.\n",
		".TP\n\\fB\\-t\\fR \\fIDIR\\fR, \\fB\\-\\-templates\\fR \\fIDIR\\fR\nA directory whose files are read",
		".SS zaqar options\n.TP\n\\fB\\-\\-zaqar\\-queue\\fR \\fIZAQAR_QUEUE\\fR\nThe queue.\n",
		".SH ENVIRONMENT\n.TP\n\\fBPROG_DIR\\fR\nWhere \\e things are.\n",
		".SH EXIT STATUS\n\\&.5 is not a status\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

// Answer answers -h, --help and --version before a "--", and nothing
// else.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		answered bool
		stdout   string
		stderr   string
	}{
		{[]string{"--help"}, true, "usage: prog", ""},
		{[]string{"file", "-h"}, true, "usage: prog", ""},
		{[]string{"--version"}, true, "1.0\n", "build x\n"},
		{[]string{"--", "--help"}, false, "", ""},
		{[]string{"--list", "dir"}, false, "", ""},
		{nil, false, "", ""},
	} {
		p := manParser()
		var stdout, stderr bytes.Buffer
		p.Build, p.Stderr = "build x", &stderr
		if got := p.Answer(tc.args, &stdout); got != tc.answered {
			t.Errorf("%q: answered %v, want %v", tc.args, got, tc.answered)
		}
		if !strings.HasPrefix(stdout.String(), tc.stdout) || (tc.stdout == "" && stdout.Len() > 0) || stderr.String() != tc.stderr {
			t.Errorf("%q: stdout %q, stderr %q", tc.args, stdout.String(), stderr.String())
		}
	}
}

// The footer's left part is the package and its version when they leave
// the centred date two columns, else the version alone, else the name.
func TestManSource(t *testing.T) {
	for _, tc := range []struct{ version, date, want string }{
		{"", "2026-11-25", "tripleo-agent"},
		{"1.2-1", "2026-11-25", "tripleo-agent 1.2-1"},
		{"1.2.3+4.g0123456-1", "2026-11-25", "tripleo-agent 1.2.3+4.g0123456-1"},
		{"0.0~git20261125.0123456-1", "2026-11-25", "0.0~git20261125.0123456-1"},
		{"1.2-1", "", "tripleo-agent 1.2-1"},
		{strings.Repeat("9", 40), "2026-11-25", "tripleo-agent"},
	} {
		if got := ManSource("tripleo-agent", tc.version, tc.date); got != tc.want {
			t.Errorf("%q, %q: %q, want %q", tc.version, tc.date, got, tc.want)
		}
	}
}
