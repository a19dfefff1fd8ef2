package argparse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// Python's argparse (3.11) on the same parser read these command lines
// the same way: which arguments are options, values or positional
// arguments, and which are refused (its words differ for "-h ").
func TestArgumentsAsArgparseReadsThem(t *testing.T) {
	p := &Parser{Prog: "prog", Positional: "rest", Options: []*Option{
		{Names: []string{"--name"}, Kind: One},
		{Names: []string{"-f", "--flag"}, Kind: Flag},
	}}
	for _, tc := range []struct {
		args string // one argument a line
		want string // name=..., rest=...; or the error's last line
	}{
		{"- 0", "rest=[- 0]"},                 // a space: positional
		{"--name\n-1", "name=[-1] rest=[]"},   // a negative number is a value
		{"--name\n-.5", "name=[-.5] rest=[]"}, // so is this one
		{"--name\n-٥", "name=[-٥] rest=[]"},   // in any digits
		{"--name\n- x", "name=[- x] rest=[]"}, // a space: a value
		{"--name\n-1a", "prog: error: argument --name: expected one argument"},
		{"-1a", "prog: error: unrecognized arguments: -1a"},
		{"--\n-f\n--name", "rest=[-f --name]"}, // after "--", positional
		{"-f\n--\na", "rest=[a]"},
		{"a\n-f\nb", "prog: error: unrecognized arguments: b"}, // one run of positional arguments
		{"a\n-f\n--", "prog: error: unrecognized arguments: --"},
		{"-f\na\nb", "rest=[a b]"},
		{"-h ", "prog: error: unrecognized arguments: -h "}, // -h with a value, not a positional
		{"--name=x y", "name=[x y] rest=[]"},
	} {
		res, err := p.Parse(strings.Split(tc.args, "\n"), io.Discard)
		var got string
		var ue *UsageError
		switch {
		case errors.As(err, &ue):
			got = ue.Msg
		case err != nil:
			got = err.Error()
		default:
			name, _ := res.Values("--name")
			rest, _ := res.Values("rest")
			if name != nil {
				got = "name=" + "[" + strings.Join(name, " ") + "] "
			}
			got += "rest=[" + strings.Join(rest, " ") + "]"
		}
		if got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.args, got, tc.want)
		}
	}
}
