// Package config reads os-collect-config's options as oslo.config reads
// the reference's: defaults, then INI files (os-collect-config.conf and a
// .conf.d directory, or --config-file and --config-dir), then the command
// line (--name, --noname for booleans, --group-name for group options,
// repeated flags for lists, the collectors as positional arguments), each
// value into the place its Option names. Which options exist is not its
// business: os-collect-config declares [DEFAULT]'s and every collector
// its own group's.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/secret"
)

// Set is a program's options.
type Set struct {
	Prog, Version string
	// Basename is the default file's name ("os-collect-config.conf";
	// the directory adds ".d").
	Basename string
	Options  []Option
	// Titles are the groups' titles in the help ("Heat metadata
	// options"), by group.
	Titles map[string]string
	// Describe, when set, adds to the parser what only the help and the
	// manual say (description, manual sections, the build for --version).
	Describe func(*argparse.Parser)
	// Accepted are keys ("GROUP.dest") a file may hold that no option
	// reads and that are not Unknown: the reference's options this
	// program has no use for (oslo.log's that only files set).
	Accepted []string
}

// Env is what parsing needs from the process.
type Env struct {
	// Stdout gets --help and --version; Stderr, the build after the
	// version (nil: not printed).
	Stdout, Stderr io.Writer
	LookupEnv      func(string) (string, bool)
	// Root prefixes /etc in the default file search; "" in production.
	Root string
	// Unknown, when set, is told of each key of a file that no option
	// reads (oslo.config ignores them without a word), once per file,
	// section and key, in the order read.
	Unknown func(Unknown)
}

// ErrExit means the command line asked for output and an exit 0
// (--help, --version) and it was printed.
var ErrExit = errors.New("printed and done")

// Error is a configuration value that cannot be used; it names the
// option, the value and where it came from.
type Error struct {
	Option, Value, Source, Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid value %q for option %s (from %s): %s", e.Value, e.Option, e.Source, e.Reason)
}

// FileError is a configuration file that cannot be read, or is not in
// oslo.config's format; Error() names it.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Parser is the command line the options make: what Parse reads, and
// the help and manual page, every option with its help, its default and
// its group's title.
func (s *Set) Parser() *argparse.Parser { return s.parser() }

func (s *Set) parser() *argparse.Parser {
	p := &argparse.Parser{Prog: s.Prog, Version: s.Version}
	p.Options = append(p.Options,
		&argparse.Option{Names: []string{"--config-dir"}, Kind: argparse.Append, Metavar: "DIR",
			Help: "A directory whose *.conf files are read in sorted order, where it stands among the --config-file options, a later file winning; repeatable. Without it, the first of ~/" + s.Basename + ".d and /etc/" + s.Basename + ".d that exists is read."},
		&argparse.Option{Names: []string{"--config-file"}, Kind: argparse.Append, Metavar: "PATH",
			Help: "A configuration file (INI) to read; repeatable, a later file winning, and the command line winning over files. Without it, the first of ~/" + s.Basename + " and /etc/" + s.Basename + " that exists is read."},
	)
	for i := range s.Options {
		o := &s.Options[i]
		help := o.Help
		if o.Default != nil && o.kind() != boolean && len(o.Default) > 0 {
			help += " (default: " + strings.Join(o.Default, " ") + ")"
		}
		if o.Positional {
			p.Positional, p.PositionalHelp = o.Name, help
			continue
		}
		title := ""
		if o.Group != "" {
			title = cmp.Or(s.Titles[o.Group], o.Group+" options")
		}
		// The main spelling goes last: the parser keys an option by it.
		var names []string
		if o.Short != "" {
			names = append(names, "-"+o.Short)
		}
		for _, a := range o.Aliases {
			names = append(names, "--"+o.flag(a))
		}
		names = append(names, "--"+o.flag(o.Name))
		switch o.kind() {
		case boolean:
			on := help
			if len(o.Default) > 0 && o.Default[0] == "true" {
				on += " (default)"
			}
			p.Options = append(p.Options,
				&argparse.Option{Names: names, Kind: argparse.Flag, Help: on, Group: title},
				&argparse.Option{Names: []string{"--" + o.flag("no"+o.Name)}, Kind: argparse.Flag, Help: "The inverse of --" + o.flag(o.Name) + ".", Group: title})
		case multi:
			p.Options = append(p.Options, &argparse.Option{Names: names, Kind: argparse.Append, Help: help, Group: title})
		default:
			p.Options = append(p.Options, &argparse.Option{Names: names, Kind: argparse.One, Help: help, Group: title})
		}
	}
	if s.Describe != nil {
		s.Describe(p)
	}
	return p
}

// Parse reads the command line (without the program name) and the files
// it names, or the default ones, into the options' places, and returns
// the files read, in order.
func (s *Set) Parse(args []string, env Env) ([]string, error) {
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	p := s.parser()
	p.Columns, p.Stderr = argparse.Columns(env.LookupEnv), env.Stderr
	res, err := p.Parse(args, env.Stdout)
	if errors.Is(err, argparse.ErrHelp) {
		return nil, ErrExit
	}
	if err != nil {
		return nil, err
	}

	// oslo.config's order: the default files (only when no --config-file
	// is given) and directories (only when no --config-dir is), then the
	// command line from left to right, each --config-file or --config-dir
	// read where it stands. A later value replaces an earlier one; values
	// of a multi-valued option accumulate.
	raw := map[string][]string{}
	sources := map[string]string{}
	assign := func(o *Option, vals []string, source string) {
		if o.kind() == multi {
			raw[o.key()] = append(raw[o.key()], vals...)
		} else {
			raw[o.key()] = []string{vals[len(vals)-1]}
		}
		sources[o.key()] = source
	}
	var used []string
	told := map[Unknown]bool{}
	read := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return &FileError{Path: path, Err: fmt.Errorf("reading config file %s: %w", path, err)}
		}
		used = append(used, path)
		err = parseINI(path, data, func(section, key, value string) {
			// Keys must be the option's dest as written (oslo.config does
			// not read "metadata-url" in a file as metadata_url).
			k := normalizeSection(section) + "." + key
			if o := s.fileKey(k); o != nil {
				assign(o, []string{value}, path)
				return
			}
			u := Unknown{File: path, Section: section, Key: key}
			if env.Unknown == nil || told[u] || slices.Contains(s.Accepted, k) {
				return
			}
			told[u] = true
			u.Nearest = s.nearest(normalizeSection(section), key)
			env.Unknown(u)
		})
		if err != nil {
			return &FileError{Path: path, Err: err}
		}
		return nil
	}
	readDir := func(d string) error {
		matches, _ := filepath.Glob(filepath.Join(d, "*.conf"))
		sort.Strings(matches)
		for _, f := range matches {
			if err := read(f); err != nil {
				return err
			}
		}
		return nil
	}
	if !res.Has("--config-file") {
		for _, f := range s.defaultFiles(env, false) {
			if err := read(f); err != nil {
				return nil, err
			}
		}
	}
	if !res.Has("--config-dir") {
		for _, d := range s.defaultFiles(env, true) {
			if err := readDir(d); err != nil {
				return nil, err
			}
		}
	}
	flags := s.cliFlags()
	for _, oc := range res.Occurrences() {
		var err error
		switch oc.Key {
		case "--config-file":
			err = read(oc.Values[0])
		case "--config-dir":
			err = readDir(oc.Values[0])
		default:
			f, ok := flags[oc.Key]
			if !ok {
				continue
			}
			switch {
			case f.opt.kind() == boolean:
				assign(f.opt, []string{strconv.FormatBool(!f.negated)}, "command line")
			case len(oc.Values) > 0:
				assign(f.opt, oc.Values, "command line")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for i := range s.Options {
		o := &s.Options[i]
		if o.Positional {
			// Positional collectors replace the configured ones.
			if v, ok := res.Values(o.Name); ok && len(v) > 0 {
				raw[o.key()], sources[o.key()] = v, "command line"
			}
		}
		if _, ok := raw[o.key()]; !ok {
			raw[o.key()], sources[o.key()] = o.Default, "default"
		}
	}
	return used, s.store(raw, sources)
}

// store puts every option's value, templates substituted, into its place.
func (s *Set) store(raw map[string][]string, sources map[string]string) error {
	sub := &substituter{set: s, raw: raw}
	for i := range s.Options {
		o := &s.Options[i]
		vals, source := raw[o.key()], sources[o.key()]
		if vals == nil {
			continue
		}
		if k := o.kind(); k == str || k == multi {
			var err error
			if vals, err = sub.all(o, vals, 0); err != nil {
				return &Error{Option: o.label(), Value: o.shown(raw[o.key()]), Source: source, Reason: err.Error()}
			}
		}
		err := set(o.Into, vals)
		if err == nil && o.NonNegative && negative(o.Into) {
			err = errors.New("must not be negative")
		}
		if err != nil {
			return &Error{Option: o.label(), Value: o.shown(vals), Source: source, Reason: err.Error()}
		}
	}
	return nil
}

// find is the option of group ("DEFAULT" for none) whose file key is dest.
func (s *Set) find(group, dest string) *Option {
	for i := range s.Options {
		o := &s.Options[i]
		if o.key() == group+"."+dest {
			return o
		}
	}
	return nil
}

// cliFlag is the option a command-line key sets, and whether it is the
// --noX form of a boolean.
type cliFlag struct {
	opt     *Option
	negated bool
}

func (s *Set) cliFlags() map[string]cliFlag {
	m := map[string]cliFlag{}
	for i := range s.Options {
		o := &s.Options[i]
		if o.Positional {
			continue
		}
		m["--"+o.flag(o.Name)] = cliFlag{opt: o}
		if o.kind() == boolean {
			m["--"+o.flag("no"+o.Name)] = cliFlag{opt: o, negated: true}
		}
	}
	return m
}

// fileKey is the option a "section.key" of a file sets, deprecated
// names included.
func (s *Set) fileKey(k string) *Option {
	for i := range s.Options {
		o := &s.Options[i]
		if o.key() == k {
			return o
		}
		for _, a := range o.Aliases {
			if o.groupName()+"."+strings.ReplaceAll(a, "-", "_") == k || o.groupName()+"."+a == k {
				return o
			}
		}
	}
	return nil
}

// defaultFiles is oslo.config's search when no file or directory is
// named: the first of ~/NAME and /etc/NAME that exists.
func (s *Set) defaultFiles(env Env, dir bool) []string {
	name := s.Basename
	if dir {
		name += ".d"
	}
	var candidates []string
	if home, ok := env.LookupEnv("HOME"); ok && home != "" {
		candidates = append(candidates, filepath.Join(home, name))
	}
	candidates = append(candidates, env.Root+"/etc/"+name)
	for _, c := range candidates {
		st, err := os.Stat(c)
		if err == nil && st.IsDir() == dir {
			return []string{c}
		}
	}
	return nil
}

// set stores vals (the last one, but for lists) into the field ptr.
func set(ptr any, vals []string) error {
	last := strings.TrimSpace(vals[len(vals)-1])
	switch p := ptr.(type) {
	case *string:
		*p = vals[len(vals)-1]
	case *secret.String:
		*p = secret.String(vals[len(vals)-1])
	case *[]string:
		*p = append([]string(nil), vals...)
	case *float64:
		f, err := strconv.ParseFloat(last, 64)
		if err != nil {
			return errors.New("not a number")
		}
		*p = f
	case *int:
		i, err := strconv.Atoi(last)
		if err != nil {
			return errors.New("not an integer")
		}
		*p = i
	case *bool:
		// oslo.config's booleans: true/false, yes/no, on/off, 1/0.
		switch strings.ToLower(last) {
		case "true", "yes", "on", "1":
			*p = true
		case "false", "no", "off", "0":
			*p = false
		default:
			return errors.New("not a boolean (true/false, yes/no, on/off, 1/0)")
		}
	default:
		return fmt.Errorf("unsupported option type %T", ptr)
	}
	return nil
}

func negative(ptr any) bool {
	switch p := ptr.(type) {
	case *float64:
		return *p < 0
	case *int:
		return *p < 0
	}
	return false
}

// Values returns every option's value by "GROUP.dest" key, as the
// reference's oslo.config would report it (nil for an unset list).
func (s *Set) Values() map[string]any {
	out := map[string]any{}
	for i := range s.Options {
		o := &s.Options[i]
		var v any
		switch p := o.Into.(type) {
		case *string:
			v = *p
		case *secret.String:
			v = p.Reveal()
		case *[]string:
			if *p != nil {
				v = *p
			}
		case *float64:
			v = *p
		case *int:
			v = *p
		case *bool:
			v = *p
		}
		out[o.key()] = v
	}
	return out
}
