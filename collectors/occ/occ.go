// Package occ is the os-collect-config command: it collects metadata from
// the configured sources, caches it, and runs the command (typically
// os-refresh-config) with OS_CONFIG_FILES when something changed,
// committing the new data only when the command succeeds. Once with
// --one-time, --force or --print; else as a daemon that polls, sleeps
// from min-polling-interval doubling up to polling-interval, wakes early
// when a local source changes, restarts on SIGHUP or a changed
// configuration, and talks to systemd (readiness, status, watchdog).
//
// docs/compat.md lists where it deliberately differs from the reference;
// among others, passes take a lock on the cache directory, so a manual
// --one-time and the daemon never interleave, and a source that is
// unavailable for a pass keeps its last good keys in OS_CONFIG_FILES
// instead of vanishing from it.
package occ

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
)

// Run runs os-collect-config with args (without the program name). It
// logs every problem itself; the error carries the exit status.
func Run(ctx context.Context, args []string, env Env) error {
	// Keys of the files that no option reads: named below, at start-up
	// only (the daemon's checks for a changed configuration parse again,
	// silently).
	var unknown []config.Unknown
	cfg, err := Parse(args, config.Env{Stdout: env.Stdout, Stderr: env.Stderr, LookupEnv: env.lookup, Root: env.Root,
		Unknown: func(u config.Unknown) { unknown = append(unknown, u) }})
	if errors.Is(err, config.ErrExit) {
		return nil
	}
	// The reference's visible output is bare messages at WARNING and
	// above; --debug, which it ignores, shows the rest here.
	level := slog.LevelWarn
	if slices.Contains(args, "-d") || slices.Contains(args, "--debug") {
		level = slog.LevelDebug
	}
	log := logging.New(env.Stderr, logging.Options{
		Identifier: "os-collect-config", Level: level, QuietAttrs: true,
		Prefix: func(time.Time, slog.Level) string { return "" },
	})
	// Unlike the reference (docs/compat.md), which ignores them silently.
	for _, u := range unknown {
		log.Warn(u.String())
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		code := exitcode.Failure
		if !errors.As(err, new(*config.Error)) {
			code = exitcode.Usage // the command line itself, or a file that is no INI
		}
		recordStop(env, log, args, err, code)
		return exitcode.With(code, err)
	}
	if cfg.PrintCachedir {
		fmt.Fprintln(env.Stdout, cfg.CacheDir)
		return nil
	}
	if err := cfg.CheckCollectors(); err != nil {
		log.Error(err.Error())
		recordStop(env, log, args, err, exitcode.Failure)
		return exitcode.With(exitcode.Failure, err)
	}
	r := newRunner(cfg, env, log)
	switch {
	case cfg.Command == "" || cfg.PrintOnly:
		return r.withDeadline(ctx, r.print)
	case cfg.OneTime:
		return r.withDeadline(ctx, r.once)
	}
	if cfg.Splay > 0 {
		// Nodes started together should not poll in step. A fraction of
		// a second is fine (the reference's integer randrange died on it).
		d := collectors.Seconds(env.rand() * cfg.Splay)
		log.Info(fmt.Sprintf("Splay: sleeping %.2f seconds first.", d.Seconds()))
		select {
		case <-ctx.Done():
			return exitcode.With(exitcode.Terminated, ctx.Err())
		case <-env.after(d):
		}
	}
	// The daemon restarts when its configuration changes from this one.
	r.args = args
	r.configHash, _ = configHash(args, env) // parsed above already
	return r.daemon(ctx)
}

// runner is one os-collect-config process's state across passes.
type runner struct {
	cfg   *Config
	env   Env
	log   *slog.Logger
	cache *cache.Cache
	// lastKeys are the keys each collector gave in its last good pass.
	lastKeys map[string][]string
	// unavailable counts the sources unavailable in the last pass.
	unavailable int
	// instances live across passes (a collector may remember what it
	// fetched, to ask only for changes).
	instances map[string]collectors.Collector
	// args and configHash are the command line and the configuration
	// the process started with.
	args       []string
	configHash string
	// stage says what the run is doing, for the --one-time deadline.
	stage atomic.Value
	// badConfig is the last invalid-configuration error logged.
	badConfig string
	// killGrace replaces the 10 s between SIGTERM and SIGKILL (tests).
	killGrace time.Duration
	// metrics is what the metrics file remembers across passes.
	metrics metricsState
}

func newRunner(cfg *Config, env Env, log *slog.Logger) *runner {
	return &runner{cfg: cfg, env: env, log: log, cache: &cache.Cache{Dir: cfg.CacheDir},
		lastKeys: map[string][]string{}, instances: map[string]collectors.Collector{}}
}

func (r *runner) setStage(s string) { r.stage.Store(s) }

// fail logs err and makes it exit with Failure.
func (r *runner) fail(err error) error {
	r.log.Error(err.Error())
	return exitcode.With(exitcode.Failure, err)
}

// withDeadline runs a one-time run under --one-time-timeout, if set; on
// expiry the command (if running) is stopped and the error names what the
// run was waiting for.
func (r *runner) withDeadline(ctx context.Context, run func(context.Context) error) error {
	d := collectors.Seconds(r.cfg.OneTimeTimeout)
	if d <= 0 || !r.cfg.OneTime {
		return run(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r.setStage("starting")
	err := run(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg := fmt.Sprintf("--one-time did not finish within %s: it was waiting for %s", d, r.stage.Load())
		r.log.Error(msg)
		return exitcode.With(exitcode.TimedOut, errors.New(msg))
	}
	return err
}
