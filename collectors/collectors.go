// Package collectors is the seam between os-collect-config's loop and its
// metadata sources: a Collector returns (key, content) entries, or says
// that its source is not configured or not available right now.
package collectors

import (
	"context"
	"errors"

	"github.com/tripleo-go/agent/collectors/merger"
)

// Collector is one metadata source.
type Collector interface {
	// Collect returns the source's entries in order: the collector's own
	// key first, then any exploded deployments.
	Collect(ctx context.Context) ([]merger.Entry, error)
}

// ErrNotConfigured is a source that is not set up on this node (logged at
// debug level, as the reference does).
var ErrNotConfigured = errors.New("not configured")

// ErrNotAvailable is a configured source that could not be read this time
// (logged as "Source [NAME] Unavailable.").
var ErrNotAvailable = errors.New("unavailable")
