package hooks

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
)

// Env is what a hook gets from its process, so tests can give it
// something else.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Environ is the hook's environment: its settings (HEAT_*), and what
	// its tools inherit.
	Environ []string
	// Hostname is `hostname -f` (the puppet hook's fqdn fact); nil runs it.
	Hostname func(ctx context.Context) (string, error)
	// Grace is the time between SIGTERM and SIGKILL when a tool is
	// stopped; 0 means proc.DefaultGrace.
	Grace time.Duration
	// Log is the hook's logger; Main sets it when nil.
	Log *slog.Logger
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	proc.CloseInheritedFDs() // tools get stdin, stdout and stderr only, as Python's children did
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}
}

// TimeoutVar names the tools' deadline (internal/deadline owns it).
const TimeoutVar = deadline.HookVar

// DefaultTimeout is the tools' deadline when TimeoutVar is unset.
const DefaultTimeout = deadline.DefaultHook

// Setting is the environment variable name, or def when it is unset or
// empty. (The reference used an empty value as a path and crashed.)
func (env Env) Setting(name, def string) string {
	if v := environ.Get(env.Environ, name); v != "" {
		return v
	}
	return def
}

// Timeout is the tools' deadline: $HEAT_CONFIG_HOOK_TIMEOUT seconds, or
// DefaultTimeout when it is unset; an error naming it when it is not a
// positive number of seconds (RunTool then runs nothing, as
// 55-heat-config exits 1 on it).
func (env Env) Timeout() (time.Duration, error) { return deadline.Hook(env.Environ) }

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// hostname is `hostname -f`, trimmed, found in the hook's PATH; it may
// take a minute at most (it can wait on DNS).
func (env Env) hostname(ctx context.Context) (string, error) {
	if env.Hostname != nil {
		return env.Hostname(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out := env.RunTool(ctx, Tool{Argv: []string{"hostname", "-f"}})
	if out.Status != 0 {
		return "", errors.New(out.AppendNote("exit status " + strconv.Itoa(out.Status)))
	}
	return strings.TrimSpace(out.Stdout), nil
}

// LookupFQDN is `hostname -f`, trimmed, or why it failed (the chef
// hook stops there).
func (env Env) LookupFQDN(ctx context.Context) (string, error) { return env.hostname(ctx) }

// FQDN is `hostname -f`, or "" (with the reference's warning) when it
// fails.
func (env Env) FQDN(ctx context.Context) string {
	name, err := env.hostname(ctx)
	if err != nil {
		env.Logger().Warn("Failed to retrieve 'hostname -f' output")
		env.Logger().Debug("hostname -f: " + err.Error())
		return ""
	}
	return name
}

// Logger is the hook's logger (Main sets it), or one that drops everything.
func (env Env) Logger() *slog.Logger {
	if env.Log == nil {
		return logging.Discard
	}
	return env.Log
}
