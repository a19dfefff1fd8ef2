package nodeconfig

import (
	"context"

	"github.com/tripleo-go/agent/internal/argparse"
)

// Step is one of the node's own configure steps as the binary runs it:
// the name it answers to (its os-refresh-config script's, or a helper
// command's), the element it belongs to, its run in the running
// process's world, and its command line (help and manual page).
type Step struct {
	Name    string
	Element string // its directory under elements/
	Run     func(ctx context.Context, args []string) error
	CLI     func() *argparse.Parser
	// Bin is a helper that other elements call from PATH (the element's
	// bin/ wrapper; make install links it in bin), not a script of the
	// element's os-refresh-config phases.
	Bin bool
}
