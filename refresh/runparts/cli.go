package runparts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
)

// Env is what the dib-run-parts command gets from its process.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}
}

const usage = `Usage: dib-run-parts [OPTION] scripts_directory
Option:
      --list  print names of all valid files

Examples:
      dib-run-parts --list /opt/stack/os-config-refresh/configure.d/
      dib-run-parts /opt/stack/os-config-refresh/configure.d/
`

// NewLog is dib-run-parts' logger: "dib-run-parts <date> message" lines
// on stderr, or journal entries with the script and its duration.
func NewLog(stderr io.Writer) *slog.Logger {
	return logging.New(stderr, logging.Options{
		Identifier: "dib-run-parts", Prefix: logging.DatePrefix("dib-run-parts"), QuietAttrs: true,
	})
}

// CompileRegex compiles RUN_PARTS_REGEX. An invalid one selects nothing,
// as in the reference, whose grep then fails; here it is also logged.
func CompileRegex(pattern string, log *slog.Logger) *regexp.Regexp {
	re, err := regexp.Compile(pattern)
	if err != nil {
		log.Warn(fmt.Sprintf("RUN_PARTS_REGEX %q is not a valid regular expression: nothing to run", pattern))
		return regexp.MustCompile(`$^.`)
	}
	return re
}

// RunCLI is the dib-run-parts command: `dib-run-parts [--list] DIR`.
func RunCLI(ctx context.Context, args []string, env Env) error {
	log := NewLog(env.Stderr)
	if len(args) < 1 {
		io.WriteString(env.Stderr, usage)
		return exitcode.With(exitcode.Failure, errors.New("no directory"))
	}
	list := false
	if args[0] == "--list" {
		list, args = true, args[1:]
	}
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		log.Info(fmt.Sprintf("Scripts directory [%s] must exist and be a directory", dir))
		io.WriteString(env.Stderr, usage)
		return exitcode.With(exitcode.Failure, ErrNotDir)
	}
	pattern := environ.Get(env.Environ, "RUN_PARTS_REGEX")
	if pattern == "" {
		pattern = DefaultRegex
	}
	re := CompileRegex(pattern, log)
	r := &Runner{Stdout: env.Stdout, Stderr: env.Stderr, Env: env.Environ, Regex: re, Log: log}
	if list {
		names, err := r.list(dir, re)
		if err != nil {
			return exitcode.With(exitcode.Failure, err)
		}
		for _, n := range names {
			fmt.Fprintf(env.Stdout, "%s/%s\n", dir, n)
		}
		return nil
	}
	err := r.Run(ctx, dir)
	var f *Failure
	if errors.As(err, &f) {
		status := f.Status
		if f.Signal != 0 && status == 0 {
			status = 128 + int(f.Signal)
		}
		return exitcode.With(status, err)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "dib-run-parts: %v\n", err)
		return exitcode.With(exitcode.Failure, err)
	}
	return nil
}
