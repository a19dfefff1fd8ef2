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
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tripleo-go/agent/applyconfig/control"
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/version"
)

// Default locations, relative to Env.Root; the metadata's are
// applyconfig/metadata's.
const (
	DefaultTemplatesDir    = "/usr/libexec/os-apply-config/templates"
	deprecatedTemplatesDir = "/opt/stack/os-apply-config/templates"
	oldTemplatesDir        = "/opt/stack/os-config-applier/templates"
)

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
			{Names: []string{"-t", "--templates"}, Kind: argparse.One, Metavar: "TEMPLATE_ROOT", Help: "template root directory (default: $OS_CONFIG_APPLIER_TEMPLATES, else " + DefaultTemplatesDir + ")"},
			{Names: []string{"-o", "--output"}, Kind: argparse.One, Metavar: "OUT_DIR", Help: "root directory for output (default: /)"},
			{Names: []string{"-m", "--metadata"}, Kind: argparse.Many, Metavar: "METADATA_FILE", Help: "metadata files; override OS_CONFIG_FILES"},
			{Names: []string{"--fallback-metadata"}, Kind: argparse.Many, Metavar: "FALLBACK_METADATA", Help: "files merged first, at the lowest priority"},
			{Names: []string{"-v", "--validate"}, Kind: argparse.Flag, Help: "render everything, write nothing"},
			{Names: []string{"--print-templates"}, Kind: argparse.Flag, Help: "print the template root and exit"},
			{Names: []string{"-s", "--subhash"}, Kind: argparse.One, Help: "render with the object at this dotted key instead of the whole metadata"},
			{Names: []string{"--key"}, Kind: argparse.One, Metavar: "KEY", Help: "print the value at this dotted key and exit"},
			{Names: []string{"--type"}, Kind: argparse.One, Help: "type the --key value must have: " + strings.Join(typeNames(), ", "), Choices: typeNames()},
			{Names: []string{"--key-default"}, Kind: argparse.One, Help: "print this when --key is missing or null"},
			{Names: []string{"--boolean-key"}, Kind: argparse.One, Help: "exit 0 if this key is true, 1 if false, 255 otherwise"},
			{Names: []string{"--version"}, Kind: argparse.Flag, Help: "print the version of the Python programs matched (" + version.Reference + ") on stdout, this build's version and commit on stderr, and exit"},
			{Names: []string{"--os-config-files"}, Kind: argparse.One, Help: "path of the JSON list of metadata files used when neither --metadata nor OS_CONFIG_FILES is given (default: " + metadata.OSConfigFilesList + ")"},
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
	// batchLog makes the logger for putting files in place (batchlog.go).
	batchLog func() (*slog.Logger, func())
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
	p := CLI()
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
		out, build := versionLines()
		fmt.Fprintln(env.Stdout, out)
		fmt.Fprintln(env.Stderr, build)
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
		opts.fallback = metadata.Fallbacks(env.Root)
	}
	opts.osConfigFiles = res.Value("--os-config-files", metadata.ListPath(env.LookupEnv, env.Root))

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
	opts.batchLog = func() (*slog.Logger, func()) { return batchedLogger(log, env.Stderr, logOpts) }

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
