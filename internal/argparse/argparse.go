// Package argparse parses command lines the way Python's argparse does for
// the reference programs, so operators' scripts keep working: unique
// prefixes of long options ("--temp" for "--templates"), "--opt=value",
// "-tVALUE", grouped short flags ("-vt DIR"), options taking any number of
// values ("-m a b c"), "--" to end options, the last repetition winning,
// and a usage error (exit status 2) for anything else. A Parser also
// describes a program for its --help, its manual page (man.go) and its
// completion, for the programs that read their arguments themselves.
package argparse

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// Kind is how many values an option takes.
type Kind int

const (
	Flag   Kind = iota // no value (store_true)
	One                // exactly one value
	Many               // zero or more values (nargs='*')
	Append             // one value per occurrence, all kept (action='append')
)

// Option describes one option. Names are like "-t" and "--templates".
type Option struct {
	Names   []string
	Kind    Kind
	Metavar string
	Help    string
	// Group titles the section of the help the option is listed in
	// ("Heat Metadata options"); "" is the first, "options".
	Group string
	// Choices are the values the completion offers after the option. The
	// help shows Metavar, as the reference's; the program checks the
	// value itself, in its own words.
	Choices []string
}

// Parser holds a program's options.
type Parser struct {
	Prog        string
	Description string
	Options     []*Option
	// Columns is the terminal width argparse would see ($COLUMNS, else 80).
	Columns int
	// Positional, when set, names where positional arguments go (a
	// nargs='*' positional); else they are refused.
	Positional string
	// Version, when set, is printed by --version, and then Build on
	// Stderr (when both are set): scripts capture the first alone.
	Version string
	Build   string
	Stderr  io.Writer
	// VersionNotInUsage keeps [--version] out of the usage line (of a
	// program whose reference had no --version, so that its usage stays
	// the reference's).
	VersionNotInUsage bool
	// PositionalHelp describes the positional arguments, in the help.
	PositionalHelp string
	// Manual is what only the manual page says (man.go).
	Manual Manual
}

// Result holds what was given: for each option's first long name (or
// short name), its values (nil for absent; empty for a flag or an empty
// Many). Positional arguments are refused, as the reference takes none.
type Result struct {
	values map[string][]string
	order  []string // keys in the order given
	occ    []Occurrence
}

// Occurrence is one option as given on the command line, in order: its
// key (first long name) and its values (none for a flag).
type Occurrence struct {
	Key    string
	Values []string
}

// Occurrences lists the options in the order given, one entry per use.
func (r *Result) Occurrences() []Occurrence { return r.occ }

// Last returns which of the given option names came last on the command
// line ("" if none): argparse lets the last of --x and --nox win.
func (r *Result) Last(names ...string) string {
	for i := len(r.order) - 1; i >= 0; i-- {
		for _, n := range names {
			if r.order[i] == n {
				return n
			}
		}
	}
	return ""
}

// Has reports whether the option was given.
func (r *Result) Has(name string) bool { _, ok := r.values[name]; return ok }

// Value returns the option's value, or def if absent.
func (r *Result) Value(name, def string) string {
	v, ok := r.values[name]
	if !ok || len(v) == 0 {
		return def
	}
	return v[len(v)-1]
}

// Values returns a Many option's values and whether it was given.
func (r *Result) Values(name string) ([]string, bool) {
	v, ok := r.values[name]
	return v, ok
}

// UsageError is a command line the parser refused; Error() is the two
// lines argparse prints.
type UsageError struct {
	Usage string
	Msg   string
}

func (e *UsageError) Error() string { return e.Usage + "\n" + e.Msg }

// ErrHelp is returned for -h/--help after the help was printed.
var ErrHelp = fmt.Errorf("help requested")

func (p *Parser) key(o *Option) string { return o.Names[len(o.Names)-1] }

func (p *Parser) usageError(format string, args ...any) error {
	return &UsageError{Usage: p.Usage(), Msg: fmt.Sprintf("%s: error: %s", p.Prog, fmt.Sprintf(format, args...))}
}

// find resolves an option string: exact match first, then a unique prefix
// of a long option.
func (p *Parser) find(s string) (*Option, error) {
	for _, o := range p.Options {
		for _, n := range o.Names {
			if n == s {
				return o, nil
			}
		}
	}
	if !strings.HasPrefix(s, "--") {
		return nil, nil
	}
	var hits []string
	var hit *Option
	for _, o := range p.Options {
		for _, n := range o.Names {
			if strings.HasPrefix(n, "--") && strings.HasPrefix(n, s) {
				hits = append(hits, n)
				hit = o
			}
		}
	}
	switch len(hits) {
	case 0:
		return nil, nil
	case 1:
		return hit, nil
	}
	return nil, p.usageError("ambiguous option: %s could match %s", s, strings.Join(hits, ", "))
}

// negativeNumber is argparse's _negative_number_matcher; Python's \d is
// any decimal digit ("-٥" too).
var negativeNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-\p{Nd}+$|^-\p{Nd}*\.\p{Nd}+$`) })

// optional is argparse's _parse_optional: whether s is an option, known
// or not, rather than a value or a positional argument. A lone "-", a
// negative number (no option of ours looks like one) and, unless it
// names an option, anything with a space are values.
func (p *Parser) optional(s string) bool {
	names := p.names()
	switch {
	case s == "" || s[0] != '-':
		return false
	case names[s]:
		return true
	case len(s) == 1:
		return false
	}
	if k, _, ok := strings.Cut(s, "="); ok && names[k] {
		return true
	}
	for n := range names {
		switch {
		case strings.HasPrefix(s, "--"):
			if k, _, _ := strings.Cut(s, "="); strings.HasPrefix(n, k) {
				return true
			}
		case n == s[:2] || strings.HasPrefix(n, s):
			return true
		}
	}
	if negativeNumber().MatchString(s) {
		return false
	}
	return !strings.Contains(s, " ")
}

// names is every option string, -h and --help (and --version) included.
func (p *Parser) names() map[string]bool {
	names := map[string]bool{"-h": true, "--help": true}
	if p.Version != "" {
		names["--version"] = true
	}
	for _, o := range p.Options {
		for _, n := range o.Names {
			names[n] = true
		}
	}
	return names
}

// Parse parses args (without the program name). For -h/--help it writes
// the help to stdout and returns ErrHelp.
func (p *Parser) Parse(args []string, stdout io.Writer) (*Result, error) {
	res := &Result{values: map[string][]string{}}
	// Positional arguments are one run, as argparse takes a nargs='*'
	// positional: once an option follows them, more are unrecognized
	// (reported at the end, as argparse does).
	var extras []string
	posStarted, posDone := false, false
	positional := func(a string) {
		if posDone {
			extras = append(extras, a)
			return
		}
		posStarted = true
		res.values[p.Positional] = append(res.values[p.Positional], a)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			// The rest are positional arguments, whatever they look like;
			// after the run of them, "--" itself is one too many.
			rest := args[i+1:]
			if p.Positional == "" {
				if len(rest) > 0 {
					return nil, p.usageError("unrecognized arguments: %s", strings.Join(rest, " "))
				}
				break
			}
			if posDone {
				extras = append(extras, a)
			}
			for _, r := range rest {
				positional(r)
			}
			break
		}
		if a == "-h" || a == "--help" || (strings.HasPrefix(a, "--h") && strings.HasPrefix("--help", a) && len(a) > 3) {
			io.WriteString(stdout, p.Help())
			return nil, ErrHelp
		}
		if !p.optional(a) {
			if p.Positional != "" {
				positional(a)
				continue
			}
			return nil, p.usageError("unrecognized arguments: %s", strings.Join(args[i:], " "))
		}
		posDone = posStarted
		if a == "--version" && p.Version != "" {
			fmt.Fprintln(stdout, p.Version)
			if p.Build != "" && p.Stderr != nil {
				fmt.Fprintln(p.Stderr, p.Build)
			}
			return nil, ErrHelp
		}
		name, explicit, hasExplicit := a, "", false
		if strings.HasPrefix(a, "--") {
			if k, v, ok := strings.Cut(a, "="); ok {
				name, explicit, hasExplicit = k, v, true
			}
		}
		o, err := p.find(name)
		if err != nil {
			return nil, err
		}
		if o == nil && !strings.HasPrefix(a, "--") {
			// A short option with its value or more flags attached.
			o, _ = p.find(a[:2])
			if o != nil {
				name, explicit, hasExplicit = a[:2], a[2:], true
				explicit = strings.TrimPrefix(explicit, "=")
				if o.Kind == Flag {
					// "-vt": the rest is more short options.
					res.values[p.key(o)] = []string{}
					res.occ = append(res.occ, Occurrence{Key: p.key(o)})
					args = append(args[:i+1], append([]string{"-" + a[2:]}, args[i+1:]...)...)
					continue
				}
			}
		}
		if o == nil {
			return nil, p.usageError("unrecognized arguments: %s", a)
		}
		key := p.key(o)
		res.order = append(res.order, key)
		switch o.Kind {
		case Flag:
			if hasExplicit {
				return nil, p.usageError("argument %s: ignored explicit argument '%s'", strings.Join(o.Names, "/"), explicit)
			}
			res.values[key] = []string{}
			res.occ = append(res.occ, Occurrence{Key: key})
		case One, Append:
			v := explicit
			if !hasExplicit {
				if i+1 >= len(args) || p.optional(args[i+1]) {
					return nil, p.usageError("argument %s: expected one argument", strings.Join(o.Names, "/"))
				}
				i++
				v = args[i]
			}
			if o.Kind == Append {
				res.values[key] = append(res.values[key], v)
			} else {
				res.values[key] = []string{v}
			}
			res.occ = append(res.occ, Occurrence{Key: key, Values: []string{v}})
		case Many:
			vals := []string{}
			if hasExplicit {
				vals = append(vals, explicit)
			} else {
				for i+1 < len(args) && !p.optional(args[i+1]) && args[i+1] != "--" {
					i++
					vals = append(vals, args[i])
				}
			}
			res.values[key] = vals
			res.occ = append(res.occ, Occurrence{Key: key, Values: vals})
		}
	}
	if len(extras) > 0 {
		return nil, p.usageError("unrecognized arguments: %s", strings.Join(extras, " "))
	}
	return res, nil
}
