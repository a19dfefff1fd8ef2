package status

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tripleo-go/agent/internal/textwrap"
	"github.com/tripleo-go/agent/internal/version"
)

// tripleo-agent-status has no Python ancestor, so the standard library's
// flag parses its command line (no argparse compatibility to keep); this
// description gives its --help, and cmd/tripleo-agent makes its manual
// page and completion of it.

// CommandLine describes tripleo-agent-status's command line.
type CommandLine struct {
	Prog, Description, Version string
	// Options are the options besides -h/--help and --version.
	Options []Option
	// Summary is the manual page's NAME line; Sections follow its OPTIONS.
	Summary  string
	Sections []Section
}

// Option is one option: its spellings, the name of its value ("" for a
// switch), its help, and the values it takes when they are few (for the
// completion).
type Option struct {
	Names         []string
	Metavar, Help string
	Choices       []string
}

// Section is a titled part of the manual page.
type Section struct {
	Title      string
	Paragraphs []string
}

// CLI is tripleo-agent-status's command line.
func CLI() CommandLine {
	return CommandLine{
		Prog:        "tripleo-agent-status",
		Description: "Shows what os-collect-config's last pass and heat-config's deployments did.",
		Version:     "tripleo-agent-status: " + version.Current().String(),
		Options: []Option{
			{Names: []string{"--format"}, Metavar: "{text,json}", Help: "text for a person (default), or json (docs/status.md)", Choices: []string{"text", "json"}},
			{Names: []string{"--wait"}, Help: "wait until this boot's first pass has ended"},
			{Names: []string{"--timeout"}, Metavar: "SECONDS", Help: "how long --wait waits (default 3600)"},
			{Names: []string{"--collect-logs"}, Help: "write a bug-report bundle, secrets redacted (docs/status.md)"},
			{Names: []string{"-o", "--output"}, Metavar: "FILE", Help: "where --collect-logs writes (default " + DefaultBundle + ")"},
		},
		Summary: "tell what the configuration agent last did",
		Sections: []Section{
			{Title: "Exit status", Paragraphs: []string{
				"0 when healthy: the last pass converged and no deployment failed; 1 when degraded (os-collect-config stopped on its configuration included); 2 for a usage error; 3 when no pass has ended since boot (with --wait: not before the timeout).",
			}},
			{Title: "See also", Paragraphs: []string{"os-collect-config(1); /usr/share/doc/tripleo-agent/docs/status.md"}},
		},
	}
}

// options are the command line, parsed; given holds the options present,
// by their last spelling ("--output").
type options struct {
	help, version, wait, collectLogs bool
	format, timeout, output          string
	given                            map[string]bool
}

// parse reads args. A usage error is worded as before flag took over
// (argparse's words), for the operator's scripts that match them.
func (c CommandLine) parse(args []string) (*options, error) {
	o := &options{given: map[string]bool{}}
	fs := flag.NewFlagSet(c.Prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&o.help, "h", false, "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolVar(&o.version, "version", false, "")
	into := map[string]any{"--format": &o.format, "--wait": &o.wait, "--timeout": &o.timeout,
		"--collect-logs": &o.collectLogs, "--output": &o.output}
	long := map[string]string{}
	for _, opt := range c.Options {
		last := opt.Names[len(opt.Names)-1]
		for _, n := range opt.Names {
			long[strings.TrimLeft(n, "-")] = last
			switch v := into[last].(type) {
			case *bool:
				fs.BoolVar(v, strings.TrimLeft(n, "-"), false, opt.Help)
			case *string:
				fs.StringVar(v, strings.TrimLeft(n, "-"), "", opt.Help)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, argparseWords(err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unrecognized arguments: %s", strings.Join(fs.Args(), " "))
	}
	fs.Visit(func(f *flag.Flag) {
		if l, ok := long[f.Name]; ok {
			o.given[l] = true
		}
	})
	return o, nil
}

// argparseWords rewords flag's two common errors as argparse did.
func argparseWords(err error) error {
	msg := err.Error()
	dashes := func(name string) string {
		if len(name) > 1 {
			return "--" + name
		}
		return "-" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return errors.New("unrecognized arguments: " + dashes(name))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("argument %s: expected one argument", dashes(name))
	}
	return err
}

// spelling is an option as the usage line and the help show it.
func (o Option) spelling() string {
	var parts []string
	for _, n := range o.Names {
		if o.Metavar != "" {
			n += " " + o.Metavar
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}

// usage is the usage line, wrapped at 80 columns as argparse wraps it.
func (c CommandLine) usage() string {
	items := []string{"[-h]", "[--version]"}
	for _, o := range c.Options {
		s := o.Names[0]
		if o.Metavar != "" {
			s += " " + o.Metavar
		}
		items = append(items, "["+s+"]")
	}
	prefix := "usage: " + c.Prog + " "
	return prefix + strings.Join(textwrap.Words(items, 80-len(prefix)), "\n"+strings.Repeat(" ", len(prefix)))
}

// WriteHelp writes the help --help prints, laid out as argparse's.
func (c CommandLine) WriteHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n%s\n\noptions:\n", c.usage(), c.Description)
	opts := append([]Option{
		{Names: []string{"-h", "--help"}, Help: "show this help message and exit"},
		{Names: []string{"--version"}, Help: "show the version and exit"},
	}, c.Options...)
	const indent = 24
	for _, o := range opts {
		s := "  " + o.spelling()
		help := textwrap.Words(strings.Fields(o.Help), 80-indent)
		if len(s) > indent-2 {
			fmt.Fprintln(w, s)
			s = ""
		}
		for _, l := range help {
			fmt.Fprintf(w, "%-*s%s\n", indent, s, l)
			s = ""
		}
	}
}
