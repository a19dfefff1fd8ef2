// Package applyconfig is the os-apply-config command: it merges the node's
// metadata, renders every template under the template root into the output
// root, and puts the files in place; or it prints one metadata key.
// docs/compat.md lists where it deliberately differs from the reference.
package applyconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tripleo-go/agent/applyconfig/control"
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/applyconfig/render"
	"github.com/tripleo-go/agent/applyconfig/writer"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/version"
)

// Default locations, relative to Env.Root.
const (
	DefaultTemplatesDir    = "/usr/libexec/os-apply-config/templates"
	deprecatedTemplatesDir = "/opt/stack/os-apply-config/templates"
	oldTemplatesDir        = "/opt/stack/os-config-applier/templates"
	DefaultOSConfigFiles   = "/var/lib/os-collect-config/os_config_files.json"
	oldOSConfigFiles       = "/var/run/os-collect-config/os_config_files.json"
)

var defaultFallbackMetadata = []string{
	"/var/cache/heat-cfntools/last_metadata",
	"/var/lib/heat-cfntools/cfn-init-data",
	"/var/lib/cloud/data/cfn-init-data",
}

// Env is what the command gets from its process, so tests can give it
// something else.
type Env struct {
	Stdout, Stderr io.Writer
	LookupEnv      func(string) (string, bool)
	// Root prefixes every built-in system path (templates, metadata
	// lists, fallbacks); "" in production.
	Root     string
	Accounts control.Accounts
	Now      func() time.Time
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv, Accounts: control.SystemAccounts{}}
}

func newParser() *argparse.Parser {
	return &argparse.Parser{
		Prog: "os-apply-config",
		Description: "Reads and merges the JSON metadata files named by OS_CONFIG_FILES (colon separated) " +
			"or --metadata, and renders the templates under the template root into the output root.",
		Options: []*argparse.Option{
			{Names: []string{"-t", "--templates"}, Kind: argparse.One, Metavar: "TEMPLATE_ROOT", Help: "template root directory"},
			{Names: []string{"-o", "--output"}, Kind: argparse.One, Metavar: "OUT_DIR", Help: "root directory for output (default: /)"},
			{Names: []string{"-m", "--metadata"}, Kind: argparse.Many, Metavar: "METADATA_FILE", Help: "metadata files; override OS_CONFIG_FILES"},
			{Names: []string{"--fallback-metadata"}, Kind: argparse.Many, Metavar: "FALLBACK_METADATA", Help: "files merged first, at the lowest priority"},
			{Names: []string{"-v", "--validate"}, Kind: argparse.Flag, Help: "render everything, write nothing"},
			{Names: []string{"--print-templates"}, Kind: argparse.Flag, Help: "print the template root and exit"},
			{Names: []string{"-s", "--subhash"}, Kind: argparse.One, Help: "render with the object at this dotted key instead of the whole metadata"},
			{Names: []string{"--key"}, Kind: argparse.One, Metavar: "KEY", Help: "print the value at this dotted key and exit"},
			{Names: []string{"--type"}, Kind: argparse.One, Help: "type the --key value must have: " + strings.Join(typeNames(), ", ")},
			{Names: []string{"--key-default"}, Kind: argparse.One, Help: "print this when --key is missing or null"},
			{Names: []string{"--boolean-key"}, Kind: argparse.One, Help: "exit 0 if this key is true, 1 if false, 255 otherwise"},
			{Names: []string{"--version"}, Kind: argparse.Flag, Help: "print the version and exit"},
			{Names: []string{"--os-config-files"}, Kind: argparse.One, Help: "path of os_config_files.json"},
			{Names: []string{"--log-file"}, Kind: argparse.One, Metavar: "PATH", Help: "also append the log to this file"},
		},
	}
}

type options struct {
	templates, output, subhash       string
	metadata, fallback               []string
	metadataGiven                    bool
	validate, printTemplates         bool
	key, keyType, keyDefault         string
	hasKeyDefault                    bool
	booleanKey, osConfigFiles, logTo string
}

// Run runs os-apply-config with args (without the program name). Every
// problem is logged here; the returned error only carries the exit status
// (see exitcode.Of).
func Run(ctx context.Context, args []string, env Env) error {
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if env.Accounts == nil {
		env.Accounts = control.SystemAccounts{}
	}
	p := newParser()
	p.Columns = argparse.Columns(env.LookupEnv)
	res, err := p.Parse(args, env.Stdout)
	if errors.Is(err, argparse.ErrHelp) {
		return nil
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return exitcode.With(exitcode.Usage, err)
	}
	if res.Has("--version") {
		fmt.Fprintln(env.Stdout, version.Reference)
		return nil
	}

	logOpts := logging.Options{Identifier: "os-apply-config", Now: env.Now}
	bootLog := logging.New(env.Stderr, logOpts)
	opts := options{
		output:        res.Value("--output", "/"),
		subhash:       res.Value("--subhash", ""),
		validate:      res.Has("--validate"),
		key:           res.Value("--key", ""),
		keyType:       res.Value("--type", "default"),
		keyDefault:    res.Value("--key-default", ""),
		hasKeyDefault: res.Has("--key-default"),
		booleanKey:    res.Value("--boolean-key", ""),
		logTo:         res.Value("--log-file", ""),
	}
	if res.Has("--templates") {
		opts.templates = res.Value("--templates", "")
	} else {
		opts.templates = defaultTemplatesDir(env, bootLog)
	}
	opts.metadata, opts.metadataGiven = res.Values("--metadata")
	if fb, ok := res.Values("--fallback-metadata"); ok {
		opts.fallback = fb
	} else {
		opts.fallback = env.rooted(defaultFallbackMetadata...)
	}
	opts.osConfigFiles = res.Value("--os-config-files", env.defaultOSConfigFiles())

	if res.Has("--print-templates") {
		fmt.Fprintln(env.Stdout, opts.templates)
		return nil
	}

	if opts.logTo != "" {
		f, err := os.OpenFile(opts.logTo, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			bootLog.Error(fmt.Sprintf("cannot open log file %s: %v", opts.logTo, err))
			return exitcode.With(exitcode.Failure, err)
		}
		defer f.Close()
		logOpts.Extra = f
	}
	log := logging.New(env.Stderr, logOpts)

	fail := func(err error) error {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if err := opts.chooseMetadata(env, log); err != nil {
		return fail(err)
	}
	if opts.key != "" && opts.booleanKey != "" {
		log.Warn("--key is not compatible with --boolean-key. --boolean-key ignored.")
	}
	switch {
	case opts.key != "":
		return printKey(env.Stdout, opts, log)
	case opts.booleanKey != "":
		return booleanKey(opts, log)
	}
	return install(ctx, opts, env, log)
}

func (env Env) rooted(paths ...string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = env.Root + p
	}
	return out
}

// defaultOSConfigFiles is $OS_CONFIG_FILES_PATH, else the standard path.
// Only a list read from this default falls back to the old location.
func (env Env) defaultOSConfigFiles() string {
	if v, ok := env.LookupEnv("OS_CONFIG_FILES_PATH"); ok {
		return v
	}
	return env.rooted(DefaultOSConfigFiles)[0]
}

// defaultTemplatesDir: $OS_CONFIG_APPLIER_TEMPLATES, else the standard
// directory, unless only a deprecated one exists.
func defaultTemplatesDir(env Env, log *slog.Logger) string {
	if v, ok := env.LookupEnv("OS_CONFIG_APPLIER_TEMPLATES"); ok {
		return v
	}
	std := env.rooted(DefaultTemplatesDir)[0]
	old := env.rooted(deprecatedTemplatesDir)[0]
	if !pypath.IsDir(old) {
		old = env.rooted(oldTemplatesDir)[0]
	}
	if pypath.IsDir(old) && !pypath.IsDir(std) {
		log.Warn(fmt.Sprintf("Template directory %s is deprecated.  The recommended location for template files is %s", old, std))
		return old
	}
	return std
}

// chooseMetadata picks the metadata files: --metadata, else
// $OS_CONFIG_FILES (even empty), else the list in --os-config-files, else
// (for the default list only) the list at its old location.
func (o *options) chooseMetadata(env Env, log *slog.Logger) error {
	if len(o.metadata) > 0 {
		return nil
	}
	if v, ok := env.LookupEnv("OS_CONFIG_FILES"); ok {
		o.metadata = strings.Split(v, ":")
		return nil
	}
	list, err := loadList(o.osConfigFiles)
	if err != nil {
		return err
	}
	if len(list) == 0 && o.osConfigFiles == env.defaultOSConfigFiles() {
		old := env.rooted(oldOSConfigFiles)[0]
		log.Warn("DEPRECATED: falling back to " + old)
		if list, err = loadList(old); err != nil {
			return err
		}
	}
	o.metadata = list
	return nil
}

// loadList reads a JSON list of file names; a missing file is an empty list.
func loadList(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("Could not read %s: %w", path, err)
	}
	doc, err := pyjson.Loads(data)
	if err != nil {
		return nil, fmt.Errorf("Could not parse %s: %w", path, err)
	}
	items, ok := doc.([]pyjson.Value)
	if !ok {
		return nil, fmt.Errorf("No list defined in json file: %s", path)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func (o *options) readMetadata() (*pyjson.Object, error) {
	return metadata.Read(append(append([]string(nil), o.fallback...), o.metadata...))
}

func printKey(stdout io.Writer, o options, log *slog.Logger) error {
	cfg, err := o.readMetadata()
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	v, ok := metadata.Lookup(cfg, o.key)
	if !ok {
		if o.hasKeyDefault {
			fmt.Fprintln(stdout, o.keyDefault)
			return nil
		}
		err := fmt.Errorf("key %s does not exist in %s", o.key, pyjson.Repr(pyjson.StringList(o.metadata)))
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if err := checkType(pyjson.Str(v), o.keyType); err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	switch v.(type) {
	case *pyjson.Object, []pyjson.Value, bool:
		fmt.Fprintln(stdout, pyjson.Dumps(v))
	default:
		fmt.Fprintln(stdout, pyjson.Str(v))
	}
	return nil
}

func booleanKey(o options, log *slog.Logger) error {
	cfg, err := o.readMetadata()
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	v, _ := metadata.Lookup(cfg, o.booleanKey)
	b, ok := v.(bool)
	switch {
	case !ok:
		return exitcode.With(exitcode.NotBoolean, nil)
	case !b:
		return exitcode.With(exitcode.Failure, nil)
	}
	return nil
}

// Python's re.match anchors at the start; its "$" also matches before a
// final newline, hence "\n?$" below. \d is any Unicode digit in Python.
var keyTypes = map[string]*regexp.Regexp{
	"int":          regexp.MustCompile(`^[0-9]+\n?$`),
	"default":      regexp.MustCompile(`^[A-Za-z0-9_]*\n?$`),
	"netaddress":   regexp.MustCompile(`^[A-Za-z0-9/.:-]*\n?$`),
	"netdevice":    regexp.MustCompile(`^[A-Za-z0-9/.:-]*\n?$`),
	"dsn":          regexp.MustCompile(`^[a-zA-Z0-9]+://([a-zA-Z0-9+_-]+(:[^@]+)?)?(@?[a-zA-Z0-9/_.-]+)?(/[a-zA-Z0-9_-]+)?(\?[a-zA-Z0-9=_-]+)?\n?$`),
	"swiftdevices": regexp.MustCompile(`^(r\p{Nd}+z\p{Nd}+-[A-Za-z0-9.-_]+:%PORT%/[^,]+,?)+\n?$`),
	"username":     regexp.MustCompile(`^[A-Za-z0-9_-]+\n?$`),
	"raw":          regexp.MustCompile(``),
}

func typeNames() []string {
	names := make([]string, 0, len(keyTypes))
	for n := range keyTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func checkType(value, typeName string) error {
	re, ok := keyTypes[typeName]
	if !ok {
		return fmt.Errorf("requested validation of unknown type: %s (valid types: %s)", typeName, strings.Join(typeNames(), ", "))
	}
	if !re.MatchString(value) {
		return fmt.Errorf("cannot interpret value '%s' as type %s", value, typeName)
	}
	return nil
}

// template is one template file, where its output goes, and whether its
// directory lists a control file for it.
type template struct {
	in, out    string
	hasControl bool
}

// rendered is a template's outcome.
type rendered struct {
	file writer.File
	err  error // already worded as the reference logs it
	pre  string
}

func install(ctx context.Context, o options, env Env, log *slog.Logger) error {
	cfg, err := o.readMetadata()
	if err == nil {
		cfg, err = metadata.Subhash(cfg, o.subhash)
	}
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	templates := walkTemplates(o.templates, o.output)
	results := renderAll(ctx, render.NewMetadata(cfg), templates, env.Accounts)
	files := make([]writer.File, 0, len(results))
	for _, r := range results {
		if r.err != nil {
			if r.pre != "" {
				log.Error(r.pre)
			}
			log.Error(r.err.Error())
			return exitcode.With(exitcode.Failure, r.err)
		}
		files = append(files, r.file)
	}
	if o.validate {
		log.Info("success")
		return nil
	}
	res, err := writer.Apply(files, log)
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	log.Info(fmt.Sprintf("%d files written, %d unchanged, %d deleted", len(res.Written), len(res.Unchanged), len(res.Deleted)))
	log.Info("success")
	return nil
}

// renderAll renders every template, in parallel, and returns the results
// in template order so the first error is the reference's first error.
// Workers take the next index from a counter: a channel hand-off per
// template cost a wake-up each.
func renderAll(ctx context.Context, md *render.Metadata, templates []template, accounts control.Accounts) []rendered {
	results := make([]rendered, len(templates))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(templates) {
				return
			}
			results[i] = renderOne(ctx, md, templates[i], accounts)
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(templates)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return results
}

// templateError is how the reference logs a failure tied to one template:
// the repr of the tuple (message, template path).
type templateError struct{ msg, path string }

func (e *templateError) Error() string { return pyjson.ReprTuple(e.msg, e.path) }

func renderOne(ctx context.Context, md *render.Metadata, t template, accounts control.Accounts) rendered {
	body, err := md.Template(ctx, t.in)
	if err != nil {
		var re *render.Error
		if errors.As(err, &re) {
			return rendered{err: &templateError{re.Msg, t.in}, pre: re.Detail}
		}
		return rendered{err: &templateError{err.Error(), t.in}}
	}
	ctl := control.Default()
	ctlPath := t.in + control.Suffix
	if !t.hasControl {
		// No such name in the directory listing: no stat needed.
	} else if st, err := os.Stat(ctlPath); err == nil && st.Mode().IsRegular() {
		data, err := os.ReadFile(ctlPath)
		if err != nil {
			return rendered{err: &templateError{"could not read " + ctlPath + ": " + err.Error(), t.in}}
		}
		ctl, err = control.Parse(data, accounts)
		if err != nil {
			msg := err.Error()
			if msg == "header is not a dict" {
				msg += ": " + t.in
			}
			return rendered{err: &templateError{msg, t.in}}
		}
	}
	return rendered{file: writer.File{
		Path: t.out, Body: body, Mode: ctl.Mode, UID: ctl.Owner, GID: ctl.Group, AllowEmpty: ctl.AllowEmpty,
	}}
}

// walkTemplates lists the templates under root as Python's os.walk does:
// hidden entries included, symlinks to files followed, symlinks to
// directories not descended into, control files skipped, unreadable
// directories silently left out. Names are sorted for a stable order.
func walkTemplates(root, output string) []template {
	var out []template
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir) // sorted by name
		if err != nil {
			return
		}
		names := make(map[string]bool, len(entries))
		for _, e := range entries {
			names[e.Name()] = true
		}
		var subdirs []string
		for _, e := range entries {
			name := e.Name()
			path := pypath.Join(dir, name)
			switch typ := e.Type(); {
			case typ.IsDir():
				subdirs = append(subdirs, path)
				continue
			case typ&fs.ModeSymlink != 0 && pypath.IsDir(path):
				continue // os.walk lists it but does not follow it
			}
			if strings.HasSuffix(name, control.Suffix) {
				continue
			}
			rel := pypath.Join(strings.TrimPrefix(dir, root), name)
			out = append(out, template{
				in:         path,
				out:        pypath.Join(output, strings.TrimPrefix(rel, "/")),
				hasControl: names[name+control.Suffix],
			})
		}
		for _, d := range subdirs {
			walk(d)
		}
	}
	walk(root)
	return out
}
