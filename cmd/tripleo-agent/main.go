// Command tripleo-agent is one binary for all the agent's programs; it runs
// the one named by the link it was started through (os-apply-config, ...),
// or by its first argument.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// runApplyConfig runs os-apply-config with a soft memory limit: its live
// data is small next to the garbage of parsing metadata and templates, and
// the heap would otherwise grow past the 20 MiB peak RSS budget (make
// bench: 19.5-21.6 MiB with GOGC=50, 17.6-18.7 MiB with the limit, in the
// same time). The limit is soft: bigger metadata only makes the collector
// work harder (its CPU is capped by the runtime). GOGC or GOMEMLIMIT in
// the environment win.
func runApplyConfig(ctx context.Context, args []string) error {
	limitApplyConfigMemory(os.Getenv)
	unmapStartupCode()
	return applyconfig.Run(ctx, args, applyconfig.ProcessEnv())
}

func limitApplyConfigMemory(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(applyConfigMemoryLimit)
	}
}

// applyConfigMemoryLimit is Go-managed memory only; the binary's mapped
// pages come on top in RSS: about 9 MiB after the package inits, 6.5 MiB
// at the end of a run once unmapStartupCode has let go of them. In the
// oacbench corpus: 15 MiB made 15-17 collections a run, 16 MiB makes 9
// at a peak RSS of 18.2-18.8 MiB (17 MiB: 7-8, but up to 19.9 MiB on a
// loaded machine, too close to the 20 MiB budget).
const applyConfigMemoryLimit = 16 << 20

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var got atomic.Value
	go func() {
		got.Store(<-sigs)
		cancel()
	}()
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	prog, ok := lookup(name)
	if !ok && len(args) > 0 {
		name, args = args[0], args[1:]
		prog, ok = lookup(name)
	}
	if !ok {
		os.Exit(agentMain(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	if answered(prog, args, os.Stdout, os.Stderr) {
		os.Exit(exitcode.OK)
	}
	code := exitcode.Of(prog.run(ctx, args))
	if sig, ok := got.Load().(syscall.Signal); ok && code == exitcode.Terminated {
		// Stopped by a signal after cleaning up: die of it, as the Python
		// programs did, so systemd counts `systemctl stop` as a clean
		// stop (an exit status of 143 is a failure to it) and shells
		// still see 128+n.
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal is delivered meanwhile
	}
	os.Exit(code)
}
