// Command tripleo-agent is one binary for all the agent's programs; it runs
// the one named by the link it was started through (os-apply-config, ...),
// or by its first argument.
package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/mainrun"
)

// runApplyConfig runs os-apply-config in the whole agent, which lets go
// of its start-up pages first (cmd/os-apply-config is the binary of its
// own that make install puts in bin).
func runApplyConfig(ctx context.Context, args []string) error {
	unmapStartupCode()
	return applyconfig.RunProcess(ctx, args)
}

func main() {
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
	mainrun.Exit(func(ctx context.Context) error { return prog.run(ctx, args) })
}
