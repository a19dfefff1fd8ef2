// Package config is os-collect-config's configuration: one typed Config
// filled, as oslo.config fills the reference's, from defaults, then INI
// files (os-collect-config.conf and a .conf.d directory, or --config-file
// and --config-dir), then the command line (--name, --noname for booleans,
// --group-name for group options, repeated flags for lists, the collectors
// as positional arguments).
package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/secret"
)

// Version is what --version prints: the reference release we match.
const Version = "12.0.0"

// Config is the whole configuration.
type Config struct {
	Command            string
	CacheDir           string
	BackupCacheDir     string
	Collectors         []string
	OneTime            bool
	MinPollingInterval float64
	PollingInterval    float64
	PrintCachedir      bool
	Force              bool
	PrintOnly          bool
	DeploymentKey      []string
	Splay              float64
	MaxMetadataBytes   int
	OneTimeTimeout     float64
	CommandTimeout     float64

	EC2 struct {
		MetadataURL string
		Timeout     float64
	}
	CFN struct {
		MetadataURL, HeatMetadataHint, CACertificate, StackName, AccessKeyID string
		Path, DeploymentKey                                                  []string
		SecretAccessKey                                                      secret.String
		Timeout                                                              float64
	}
	Heat struct {
		UserID, ProjectID, AuthURL, StackID, ResourceName, RegionName string
		Password                                                      secret.String
	}
	HeatLocal struct{ Path []string }
	Local     struct{ Path []string }
	Request   struct {
		MetadataURL string
		Timeout     float64
	}
	Keystone struct {
		CacheDir string
		CacheTTL int
	}
	Zaqar struct {
		UserID, ProjectID, AuthURL, QueueID, RegionName, CAFile string
		Password                                                secret.String
		UseWebsockets, SSLCertificateValidation                 bool
	}

	// ConfigFiles are the files read, in order (their hash tells a
	// configuration change).
	ConfigFiles []string
}

// Env is what parsing needs from the process.
type Env struct {
	Stdout    io.Writer
	LookupEnv func(string) (string, bool)
	// Root prefixes /etc in the default file search; "" in production.
	Root string
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

func (o *option) key() string {
	dest := o.dest
	if dest == "" {
		dest = strings.ReplaceAll(o.name, "-", "_")
	}
	return o.groupName() + "." + dest
}

func (o *option) groupName() string {
	if o.group == "" {
		return "DEFAULT"
	}
	return o.group
}

func (o *option) label() string {
	if o.group == "" {
		return o.name
	}
	return o.group + "." + o.name
}

// flag is the option's command-line spelling without dashes.
func (o *option) flag(name string) string {
	if o.group == "" {
		return name
	}
	return o.group + "-" + name
}

func newParser() *argparse.Parser {
	p := &argparse.Parser{Prog: "os-collect-config", Positional: "collectors", Version: Version}
	p.Options = append(p.Options,
		&argparse.Option{Names: []string{"--config-dir"}, Kind: argparse.Append, Metavar: "DIR"},
		&argparse.Option{Names: []string{"--config-file"}, Kind: argparse.Append, Metavar: "PATH"},
	)
	for i := range options {
		o := &options[i]
		if o.positional {
			continue
		}
		// The main spelling goes last: the parser keys an option by it.
		var names []string
		if o.short != "" {
			names = append(names, "-"+o.short)
		}
		for _, a := range o.aliases {
			names = append(names, "--"+o.flag(a))
		}
		names = append(names, "--"+o.flag(o.name))
		switch o.kind {
		case boolean:
			p.Options = append(p.Options,
				&argparse.Option{Names: names, Kind: argparse.Flag},
				&argparse.Option{Names: []string{"--" + o.flag("no"+o.name)}, Kind: argparse.Flag})
		case multi:
			p.Options = append(p.Options, &argparse.Option{Names: names, Kind: argparse.Append})
		default:
			p.Options = append(p.Options, &argparse.Option{Names: names, Kind: argparse.One})
		}
	}
	return p
}

// Parse builds the configuration from the command line (without the
// program name) and the files it names or the default ones.
func Parse(args []string, env Env) (*Config, error) {
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	p := newParser()
	p.Columns = argparse.Columns(env.LookupEnv)
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
	assign := func(o *option, vals []string, source string) {
		if o.kind == multi {
			raw[o.key()] = append(raw[o.key()], vals...)
		} else {
			raw[o.key()] = []string{vals[len(vals)-1]}
		}
		sources[o.key()] = source
	}
	var used []string
	read := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading config file %s: %w", path, err)
		}
		used = append(used, path)
		return parseINI(path, data, func(section, key, value string) {
			// Keys must be the option's dest as written (oslo.config does
			// not read "metadata-url" in a file as metadata_url).
			if o := lookupFileKey(normalizeSection(section) + "." + key); o != nil {
				assign(o, []string{value}, path)
			}
		})
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
		for _, f := range defaultFiles(env, "os-collect-config.conf", false) {
			if err := read(f); err != nil {
				return nil, err
			}
		}
	}
	if !res.Has("--config-dir") {
		for _, d := range defaultFiles(env, "os-collect-config.conf.d", true) {
			if err := readDir(d); err != nil {
				return nil, err
			}
		}
	}
	flags := cliFlags()
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
			case f.opt.kind == boolean:
				assign(f.opt, []string{strconv.FormatBool(!f.negated)}, "command line")
			case len(oc.Values) > 0:
				assign(f.opt, oc.Values, "command line")
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for i := range options {
		o := &options[i]
		if o.positional {
			// Positional collectors replace the configured ones.
			if v, ok := res.Values(o.name); ok && len(v) > 0 {
				raw[o.key()], sources[o.key()] = v, "command line"
			}
		}
		if _, ok := raw[o.key()]; !ok {
			raw[o.key()], sources[o.key()] = o.def, "default"
		}
	}
	sub := &substituter{raw: raw}
	c := &Config{ConfigFiles: used}
	for i := range options {
		o := &options[i]
		vals, source := raw[o.key()], sources[o.key()]
		if o.field == nil || vals == nil {
			continue
		}
		if o.kind == str || o.kind == multi {
			var err error
			if vals, err = sub.all(o, vals, 0); err != nil {
				shown := strings.Join(raw[o.key()], ",")
				if o.secret {
					shown = "***"
				}
				return nil, &Error{Option: o.label(), Value: shown, Source: source, Reason: err.Error()}
			}
		}
		err := set(o.field(c), vals)
		if err == nil && o.nonNegative && negative(o.field(c)) {
			err = errors.New("must not be negative")
		}
		if err != nil {
			shown := strings.Join(vals, ",")
			if o.secret {
				shown = "***"
			}
			return nil, &Error{Option: o.label(), Value: shown, Source: source, Reason: err.Error()}
		}
	}
	if c.Force {
		c.OneTime = true
	}
	return c, nil
}

// substituter expands oslo.config's templates in string values: $name or
// ${name} is the value of option name (its own group first, then
// DEFAULT; "group.name" for another group), $$ or \$ is a dollar sign, and
// a dollar sign before anything else stays. A name that is no option is
// an error (the reference dies on it).
type substituter struct{ raw map[string][]string }

var template = regexp.MustCompile(`(?i)\$(?:(\$)|([_a-z][._a-z0-9]*)|\{([_a-z][._a-z0-9]*)\}|)`)

func (s *substituter) all(o *option, vals []string, depth int) ([]string, error) {
	out := make([]string, len(vals))
	for i, v := range vals {
		var err error
		if out[i], err = s.one(o.groupName(), v, depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *substituter) one(group, v string, depth int) (string, error) {
	if depth > 10 {
		return "", errors.New("options refer to each other in a loop")
	}
	v = strings.ReplaceAll(v, `\$`, "$$")
	var firstErr error
	out := template.ReplaceAllStringFunc(v, func(m string) string {
		g := template.FindStringSubmatch(m)
		switch {
		case g[1] != "":
			return "$"
		case g[2] == "" && g[3] == "":
			return m // not a template: kept as is
		}
		name := g[2] + g[3]
		val, err := s.lookup(group, name, depth)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return val
	})
	return out, firstErr
}

// lookup is the text of option name as Python's str() shows its value.
func (s *substituter) lookup(group, name string, depth int) (string, error) {
	o := findOption(group, name)
	if o == nil && strings.Contains(name, ".") {
		g, n, _ := strings.Cut(name, ".")
		o = findOption(g, n)
	}
	if o == nil {
		o = findOption("DEFAULT", name)
	}
	if o == nil {
		return "", fmt.Errorf("no option %q to substitute for $%s (write $$ for a dollar sign)", name, name)
	}
	vals := s.raw[o.key()]
	switch {
	case vals == nil:
		return "", nil
	case o.kind == multi:
		subbed, err := s.all(o, vals, depth+1)
		return pyjson.Repr(pyjson.StringList(subbed)), err
	case o.kind == boolean:
		if b, err := strconv.ParseBool(strings.TrimSpace(vals[len(vals)-1])); err == nil && b {
			return "True", nil
		}
		return "False", nil
	case o.kind == str:
		return s.one(o.groupName(), vals[len(vals)-1], depth+1)
	}
	return vals[len(vals)-1], nil
}

func findOption(group, dest string) *option {
	for i := range options {
		o := &options[i]
		if o.key() == group+"."+dest {
			return o
		}
	}
	return nil
}

// cliFlag is the option a command-line key sets, and whether it is the
// --noX form of a boolean.
type cliFlag struct {
	opt     *option
	negated bool
}

func cliFlags() map[string]cliFlag {
	m := map[string]cliFlag{}
	for i := range options {
		o := &options[i]
		if o.positional {
			continue
		}
		m["--"+o.flag(o.name)] = cliFlag{opt: o}
		if o.kind == boolean {
			m["--"+o.flag("no"+o.name)] = cliFlag{opt: o, negated: true}
		}
	}
	return m
}

func lookupFileKey(k string) *option {
	for i := range options {
		o := &options[i]
		if o.key() == k {
			return o
		}
		for _, a := range o.aliases {
			if o.groupName()+"."+strings.ReplaceAll(a, "-", "_") == k || o.groupName()+"."+a == k {
				return o
			}
		}
	}
	return nil
}

// normalizeSection is oslo.config's: DEFAULT stays, others are lower case.
func normalizeSection(s string) string {
	if s == "DEFAULT" {
		return s
	}
	return strings.ToLower(s)
}

// defaultFiles is oslo.config's search when no file or directory is
// named: the first of ~/NAME and /etc/NAME that exists.
func defaultFiles(env Env, name string, dir bool) []string {
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

// CheckCollectors refuses unknown collector names with the reference's
// message (which it gives, as a traceback, before doing anything).
func (c *Config) CheckCollectors() error {
	names := c.Collectors
	known := map[string]bool{}
	for _, n := range DefaultCollectors {
		known[n] = true
	}
	var bad []pyjson.Value
	for _, n := range names {
		if !known[n] {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("Unknown collectors %s. Valid collectors are: %s", pyjson.Repr(bad), pyjson.Repr(pyjson.StringList(DefaultCollectors)))
}

// parseINI reads oslo.config's INI dialect: [section] headers, "key =
// value" or "key: value", continuation lines indented, comments starting
// with # or ;, matching quotes around a value removed.
func parseINI(path string, data []byte, emit func(section, key, value string)) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	section, key, value := "", "", ""
	inValue := false
	flush := func() {
		if inValue {
			emit(section, key, unquote(value))
			inValue = false
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case line[0] == ' ' || line[0] == '\t':
			if !inValue {
				return fmt.Errorf("%s:%d: unexpected continuation line", path, n)
			}
			value += "\n" + trimmed
			continue
		}
		flush()
		if strings.HasPrefix(trimmed, "[") {
			if !strings.HasSuffix(trimmed, "]") || len(trimmed) < 3 {
				return fmt.Errorf("%s:%d: invalid section header %q", path, n, trimmed)
			}
			section = strings.TrimSpace(trimmed[1 : len(trimmed)-1])
			continue
		}
		i := strings.IndexAny(trimmed, ":=")
		if i <= 0 {
			return fmt.Errorf("%s:%d: expected \"key = value\", got %q", path, n, trimmed)
		}
		if section == "" {
			return fmt.Errorf("%s:%d: option %q before any [section]", path, n, strings.TrimSpace(trimmed[:i]))
		}
		key, value, inValue = strings.TrimSpace(trimmed[:i]), strings.TrimSpace(trimmed[i+1:]), true
	}
	flush()
	return sc.Err()
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == v[len(v)-1] && (v[0] == '"' || v[0] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
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
// reference's oslo.config would report it (nil for an unset option).
func (c *Config) Values() map[string]any {
	out := map[string]any{}
	for i := range options {
		o := &options[i]
		if o.field == nil {
			continue
		}
		var v any
		switch p := o.field(c).(type) {
		case *string:
			v = *p
		case *secret.String:
			v = string(*p)
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
