package occ

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/systemd"
)

// Env is what the command gets from its process.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes /etc in the default config file search.
	Root string
	// After and Now are the clock of the daemon's waits (time.After and
	// time.Now when nil); tests replace them.
	After func(d time.Duration) <-chan time.Time
	Now   func() time.Time
	// Hangup delivers SIGHUP (nil: none).
	Hangup <-chan os.Signal
	// Reexec replaces the process with a fresh start of the same command
	// line, as the reference re-executes itself; tests replace it.
	Reexec func() error
	// Notify talks to systemd (nil: not at all).
	Notify *systemd.Notifier
	// StatusDir receives the record of each pass for `tripleo-agent
	// status` ("": none, as in tests).
	StatusDir string
	// RunCommand, when set, runs instead of the command (given the
	// OS_CONFIG_FILES list) and returns its exit status: many daemons
	// share one process in the fleet simulation (tools/fleetsim).
	RunCommand func(ctx context.Context, files []string) int
	// Rand returns a number in [0, 1) for the splay and the jitter
	// (math/rand/v2's when nil); tests replace it.
	Rand func() float64
	// ReturnMemory hands each pass's garbage back to the kernel: the
	// process is one daemon that sleeps most of its life. Off in tests
	// and where many daemons share the process.
	ReturnMemory bool
	// Settle, when set, runs once, as the daemon is done with its first
	// pass: what a process that stays resident lets go of (the
	// multi-call binary's pages mapped for its start). A one-time run
	// exits instead, and spends nothing on it.
	Settle func()
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	proc.CloseInheritedFDs() // the command gets stdin, stdout and stderr only
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	dir := agentstate.DefaultDir
	if d, ok := os.LookupEnv(agentstate.DirVar); ok {
		dir = d
	}
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), Hangup: hup, Reexec: reexec, Notify: systemd.New(),
		StatusDir: dir, ReturnMemory: true}
}

// reexec starts this program again with the same arguments and
// environment, in this process (argv[0] keeps the program's name for the
// multi-call binary).
func reexec() error {
	return syscall.Exec("/proc/self/exe", os.Args, os.Environ())
}

func (env Env) lookup(name string) (string, bool) { return environ.Lookup(env.Environ, name) }

func (env Env) rand() float64 {
	if env.Rand != nil {
		return env.Rand()
	}
	return rand.Float64()
}

func (env Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

func (env Env) after(d time.Duration) <-chan time.Time {
	if env.After != nil {
		return env.After(d)
	}
	return time.After(d)
}
