// Package refresh is the os-refresh-config command: under a lock, it runs
// the phase directories of the base directory (pre-configure.d,
// configure.d, post-configure.d, migration.d) in order with run-parts
// semantics, stops at the first failing phase, and then runs error.d.
// docs/compat.md lists where it deliberately differs from the reference.
package refresh

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pyerr"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/refresh/runparts"
)

// Phases run in this order.
var Phases = []string{"pre-configure", "configure", "post-configure", "migration"}

// Default locations, relative to Env.Root.
const (
	DefaultBaseDir  = "/usr/libexec/os-refresh-config"
	OldBaseDir      = "/opt/stack/os-config-refresh"
	DefaultLockfile = "/var/run/os-refresh-config.lock"
)

// Env is what the command gets from its process.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes the built-in base directories; "" in production.
	Root string
	Now  func() time.Time
	// Grace is the time between SIGTERM and SIGKILL on a timeout.
	Grace time.Duration
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}
}

func (env Env) lookup(name string) (string, bool) { return environ.Lookup(env.Environ, name) }

var logLevels = map[string]slog.Level{
	"ERROR": slog.LevelError, "WARN": slog.LevelWarn, "CRITICAL": logging.LevelCritical,
	"INFO": slog.LevelInfo, "DEBUG": slog.LevelDebug,
}

func newParser() *argparse.Parser {
	return &argparse.Parser{
		Prog: "os-refresh-config",
		Description: "Runs through all of the phases to ensure configuration is applied and enabled on a machine. " +
			"Exits with an error if any phase fails. Set OS_REFRESH_CONFIG_BASE_DIR to override the base directory.",
		Options: []*argparse.Option{
			{Names: []string{"--print-base"}, Kind: argparse.Flag, Help: "print the base directory and exit"},
			{Names: []string{"--print-phases"}, Kind: argparse.Flag, Help: "print the phases (tab separated) and exit"},
			{Names: []string{"--log-level"}, Kind: argparse.One, Metavar: "{ERROR,WARN,CRITICAL,INFO,DEBUG}", Help: "the least severe messages logged (default INFO)",
				Choices: []string{"ERROR", "WARN", "CRITICAL", "INFO", "DEBUG"}},
			{Names: []string{"--lockfile"}, Kind: argparse.One, Help: "lock file that keeps a second run out (default " + DefaultLockfile + ")"},
			{Names: []string{"--timeout"}, Kind: argparse.One, Help: "seconds the whole run may take; past them the running script gets SIGTERM, then SIGKILL, and the run fails (default: no limit)"},
		},
	}
}

// baseDir is $OS_REFRESH_CONFIG_BASE_DIR (even empty), else the standard
// directory, unless only the deprecated one exists.
func baseDir(env Env) string {
	if v, ok := env.lookup("OS_REFRESH_CONFIG_BASE_DIR"); ok {
		return v
	}
	std, old := env.Root+DefaultBaseDir, env.Root+OldBaseDir
	if pypath.IsDir(old) && !pypath.IsDir(std) {
		// The reference warns through Python's root logger at import time.
		fmt.Fprintf(env.Stderr, "WARNING:root:Base directory %s is deprecated. The recommended base directory is %s\n", old, std)
		return old
	}
	return std
}

// Run runs os-refresh-config with args (without the program name). It
// logs every problem itself; the error carries the exit status.
func Run(ctx context.Context, args []string, env Env) error {
	base := baseDir(env)
	p := CLI()
	p.Columns, p.Stderr = argparse.Columns(env.lookup), env.Stderr
	res, err := p.Parse(args, env.Stdout)
	if errors.Is(err, argparse.ErrHelp) {
		return nil
	}
	usageErr := func(err error) error {
		fmt.Fprintln(env.Stderr, err)
		return exitcode.With(exitcode.Usage, err)
	}
	if err != nil {
		return usageErr(err)
	}
	levelName := res.Value("--log-level", "INFO")
	level, ok := logLevels[levelName]
	if !ok {
		return usageErr(&argparse.UsageError{Usage: p.Usage(), Msg: fmt.Sprintf(
			"os-refresh-config: error: argument --log-level: invalid choice: '%s' (choose from 'ERROR', 'WARN', 'CRITICAL', 'INFO', 'DEBUG')", levelName)})
	}
	timeout := 0
	if v := res.Value("--timeout", ""); res.Has("--timeout") {
		if timeout, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return usageErr(&argparse.UsageError{Usage: p.Usage(), Msg: fmt.Sprintf(
				"os-refresh-config: error: argument --timeout: invalid int value: '%s'", v)})
		}
	}
	if res.Has("--print-base") {
		fmt.Fprintln(env.Stdout, base)
		return nil
	}
	if res.Has("--print-phases") {
		fmt.Fprintln(env.Stdout, strings.Join(Phases, "\t"))
		return nil
	}

	log := logging.New(env.Stderr, logging.Options{
		Identifier: "os-refresh-config", Level: level, Now: env.Now,
		Prefix: logging.PythonPrefix("os-refresh-config"), QuietAttrs: true,
	})
	lockPath := res.Value("--lockfile", DefaultLockfile)
	if env.Now == nil {
		env.Now = time.Now
	}
	lock, err := acquireLock(lockPath, env.Now())
	if err != nil {
		log.Error(err.Error())
		var le *lockError
		if errors.As(err, &le) && le.busy {
			return exitcode.With(exitcode.LockHeld, err)
		}
		return exitcode.With(exitcode.Failure, err)
	}
	defer releaseLock(lock)

	partLog := runparts.NewLog(env.Stderr)
	r := &runner{
		base: base, log: log, partLog: partLog, timeout: time.Duration(timeout) * time.Second,
		parts: &runparts.Runner{
			Stdout: env.Stdout, Stderr: env.Stderr, Env: coerceLocale(env.Environ),
			Log: partLog, Grace: cmp.Or(env.Grace, runparts.DefaultGrace),
		},
	}
	if v, ok := env.lookup("RUN_PARTS_REGEX"); ok && v != "" {
		r.parts.Regex = runparts.CompileRegex(v, r.parts.Log)
	}
	return r.run(ctx)
}

type runner struct {
	base    string
	log     *slog.Logger
	partLog *slog.Logger // dib-run-parts' lines; each phase adds its name
	timeout time.Duration
	parts   *runparts.Runner
}

// deadline bounds a stretch of work by --timeout, if given. On expiry it
// logs, then cancels, so the log line comes before the kill as in the
// reference.
func (r *runner) deadline(ctx context.Context) (context.Context, func()) {
	if r.timeout <= 0 {
		return ctx, func() {}
	}
	tctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(r.timeout, func() {
		r.log.Error(fmt.Sprintf("Timeout reached: %ds. Sending SIGTERM to all children, SIGKILL after %s",
			int(r.timeout/time.Second), r.parts.Grace))
		cancel()
	})
	return tctx, func() { timer.Stop(); cancel() }
}

func (r *runner) run(ctx context.Context) error {
	pctx, done := r.deadline(ctx)
	defer done()
	for _, phase := range Phases {
		dir := pypath.Join(r.base, phase+".d")
		r.log.Debug("Checking " + dir)
		if _, err := os.Stat(dir); err != nil {
			r.log.Debug("No dir for phase " + phase)
			continue
		}
		r.log.Info("Starting phase "+phase, "phase", phase)
		r.log.Debug("Running " + jsondoc.PyRepr([]jsondoc.Value{"dib-run-parts", dir}))
		start := time.Now()
		r.parts.Log = r.partLog.With("phase", phase)
		err := r.parts.Run(pctx, dir)
		if err == nil {
			r.log.Info("Completed phase "+phase, "phase", phase, "seconds", fmt.Sprintf("%.3f", time.Since(start).Seconds()))
			continue
		}
		r.log.Error(fmt.Sprintf("during %s phase. [%s]\n", phase, describe(dir, err)), "phase", phase)
		if ctx.Err() != nil {
			// Stopped by a signal: no handlers, the agent is going away.
			r.log.Error("Aborting...")
			return exitcode.With(exitcode.Terminated, ctx.Err())
		}
		errorDir := pypath.Join(r.base, "error.d")
		if _, err := os.Stat(errorDir); err == nil {
			r.log.Info("Calling error handlers.")
			ectx, edone := r.deadline(ctx)
			r.parts.Log = r.partLog.With("phase", "error")
			_ = r.parts.Run(ectx, errorDir) // the reference ignores its result
			edone()
		}
		r.log.Error("Aborting...")
		return exitcode.With(exitcode.Failure, err)
	}
	return nil
}

// describe words a phase failure as Python's CalledProcessError for
// `dib-run-parts DIR` does.
func describe(dir string, err error) string {
	cmd := "'" + jsondoc.PyRepr([]jsondoc.Value{"dib-run-parts", dir}) + "'"
	var f *runparts.Failure
	switch {
	case errors.As(err, &f) && f.Signal != 0:
		return fmt.Sprintf("Command %s %s.", cmd, proc.DiedWith(f.Signal))
	case errors.As(err, &f):
		return fmt.Sprintf("Command %s returned non-zero exit status %d.", cmd, f.Status)
	case errors.Is(err, runparts.ErrNotDir):
		return fmt.Sprintf("%s is not a directory", dir)
	}
	return err.Error()
}

// coerceLocale makes the environment what the reference's children see:
// Python (PEP 538) sets LC_CTYPE=C.UTF-8 in its own environment when the
// locale is C or POSIX and LC_ALL is not set.
func coerceLocale(env []string) []string {
	get := func(k string) string { return environ.Get(env, k) }
	if get("PYTHONCOERCECLOCALE") == "0" || get("LC_ALL") != "" {
		return env
	}
	loc := get("LC_CTYPE")
	if loc == "" {
		loc = get("LANG")
	}
	if loc != "" && loc != "C" && loc != "POSIX" {
		return env
	}
	return environ.With(env, "LC_CTYPE", "C.UTF-8")
}

// lockError is a lock that could not be taken.
type lockError struct {
	msg  string
	busy bool
}

func (e *lockError) Error() string { return e.msg }

// acquireLock takes the run lock as the reference does (a non-blocking
// flock on a file opened for appending, never deleted), then writes who
// holds it. Unlike the reference, whose write sits in a buffer until the
// end, the line is on disk while the lock is held.
func acquireLock(path string, now time.Time) (*proc.Lock, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return nil, &lockError{msg: fmt.Sprintf("Could not open lock file %s. %s", path, pyerr.ErrorString(err, path))}
	}
	lock, err := proc.TryLock(f)
	if err != nil {
		f.Close()
		return nil, &lockError{msg: fmt.Sprintf("Could not lock %s. [Errno %d] %s", path, int(syscall.EAGAIN), "Resource temporarily unavailable"),
			busy: errors.Is(err, proc.ErrBusy)}
	}
	_ = f.Truncate(0)
	fmt.Fprintf(f, "Locked by pid==%d at %s\n", os.Getpid(), structTime(now))
	return lock, nil
}

// releaseLock empties the lock file and lets the lock go, as the
// reference does at the end of every run.
func releaseLock(lock *proc.Lock) {
	_ = lock.File().Truncate(0)
	_ = lock.Unlock()
}

// structTime is Python's repr of time.localtime().
func structTime(t time.Time) string {
	isdst := 0
	if t.IsDST() {
		isdst = 1
	}
	return fmt.Sprintf("time.struct_time(tm_year=%d, tm_mon=%d, tm_mday=%d, tm_hour=%d, tm_min=%d, tm_sec=%d, tm_wday=%d, tm_yday=%d, tm_isdst=%d)",
		t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), (int(t.Weekday())+6)%7, t.YearDay(), isdst)
}
