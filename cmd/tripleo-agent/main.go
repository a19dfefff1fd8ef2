// Command tripleo-agent is one binary for all the agent's programs; it runs
// the one named by the link it was started through (os-apply-config, ...),
// or by its first argument.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/refresh"
	"github.com/tripleo-go/agent/refresh/runparts"
)

// programs maps a program name to its entry point.
var programs = map[string]func(ctx context.Context, args []string) error{
	"os-apply-config": runApplyConfig,
	"os-collect-config": func(ctx context.Context, args []string) error {
		return occ.Run(ctx, args, occ.ProcessEnv())
	},
	"os-refresh-config": func(ctx context.Context, args []string) error {
		return refresh.Run(ctx, args, refresh.ProcessEnv())
	},
	"dib-run-parts": func(ctx context.Context, args []string) error {
		return runparts.RunCLI(ctx, args, runparts.ProcessEnv())
	},
	// The reference's legacy name for os-apply-config.
	"os-config-applier": runApplyConfig,
}

// runApplyConfig runs os-apply-config with a tighter garbage collector:
// its live data is small next to the garbage of parsing metadata and
// templates. Measured on the make bench corpus: peak RSS 18.2 MiB instead
// of 19.5-20.8 MiB (the target is 20), for about a tenth more time on a
// fresh render. GOGC in the environment wins.
func runApplyConfig(ctx context.Context, args []string) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	return applyconfig.Run(ctx, args, applyconfig.ProcessEnv())
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	run, ok := programs[name]
	if !ok && len(args) > 0 {
		name, args = args[0], args[1:]
		run, ok = programs[name]
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "tripleo-agent: unknown program %q; run it through a link named after one of the programs\n", name)
		os.Exit(exitcode.Usage)
	}
	os.Exit(exitcode.Of(run(ctx, args)))
}
