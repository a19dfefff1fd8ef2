package deployed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tripleo-go/agent/internal/durable"
	"github.com/tripleo-go/agent/internal/proc"
)

// Lock takes the lock of the directory (flock on the directory itself,
// internal/proc's lock), waiting for a concurrent 55-heat-config run
// (an operator's beside the daemon's) to end, or ctx. waiting, if not
// nil, is called once if it has to wait. Whoever holds it is the only
// writer: its Sweep cannot remove a file another run is staging.
func (d Dir) Lock(ctx context.Context, waiting func()) (*proc.Lock, error) {
	f, err := os.Open(string(d))
	if err != nil {
		return nil, err
	}
	l, err := proc.WaitLock(ctx, f, waiting)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", d, err)
	}
	return l, nil
}

// Sweep removes the files that this package and agentstate.Write staged
// in the directory (state files, in-flight markers, signal data,
// records) for runs killed between the write and the link or rename: no
// later run would otherwise touch them (their deployment is done). It
// returns their paths. The caller holds the Lock: a staged file is then
// a dead run's, whatever its age.
func (d Dir) Sweep() []string {
	entries, _ := os.ReadDir(string(d))
	var removed []string
	for _, e := range entries {
		target, ok := durable.StagedFor(e.Name())
		if !ok || !(strings.HasSuffix(target, StateSuffix) || strings.HasSuffix(target, InflightSuffix)) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(string(d), e.Name())
		if os.Remove(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}
