// Command os-apply-config is os-apply-config alone, the binary make
// install puts in bin under its name (and os-config-applier's): it runs
// on every change of the metadata, and the whole agent's start, every
// program's packages initialised, was a tenth of its run (make bench).
// cmd/tripleo-agent answers to the name too.
package main

import (
	"context"
	"os"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/internal/mainrun"
)

func main() {
	mainrun.Exit(func(ctx context.Context) error { return applyconfig.RunProcess(ctx, os.Args[1:]) })
}
