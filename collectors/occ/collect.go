package occ

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/agentstate"
)

// collected is one pass's entries; kept are the names of keys reused from
// an earlier pass because their collector was unavailable; from names the
// collector of each key.
type collected struct {
	entries []collectors.Entry
	kept    map[string]bool
	from    map[string]string
	// results are each collector's, for the status record.
	results []agentstate.Collector
}

// collect runs every collector in order and returns their entries.
func (r *runner) collect(ctx context.Context) collected {
	out := collected{kept: map[string]bool{}, from: map[string]string{}}
	r.unavailable = 0
	for _, name := range r.cfg.Collectors {
		log := r.log.With("collector", name)
		r.setStage("collector " + name)
		polled := time.Now()
		entries, err := r.collectOne(ctx, name, log)
		res := agentstate.Collector{Name: name, Result: "ok", Polled: polled}
		switch {
		case errors.Is(err, collectors.ErrNotConfigured):
			res.Result = "not-configured"
		case errors.Is(err, collectors.ErrDegraded):
			// Its entries are good: some files' keys kept their last
			// committed data or were left out, which it logged.
			res.Result, res.Reason = "degraded", err.Error()
			err = nil
		case err != nil:
			res.Result, res.Reason = "unavailable", err.Error()
		}
		out.results = append(out.results, res)
		switch {
		case errors.Is(err, collectors.ErrNotConfigured):
			log.Debug(fmt.Sprintf("Source [%s] Not configured.", name))
			continue
		case err != nil:
			// The cause first, then the verdict, as the reference logs them;
			// a request cut short by the daemon's own stop is no failure of
			// the source (the reference, killed, said nothing either).
			level := slog.LevelWarn
			if ctx.Err() != nil {
				level = slog.LevelDebug
			}
			if cause := collectors.Cause(err); cause != nil {
				log.Log(ctx, level, cause.Error())
			}
			log.Log(ctx, level, fmt.Sprintf("Source [%s] Unavailable.", name), "reason", err.Error())
			r.unavailable++
			// Keep what it gave last time, in its place (the reference
			// dropped it, and os-apply-config then lost its data).
			for _, k := range r.lastKeys[name] {
				out.entries = append(out.entries, collectors.Entry{Name: k})
				out.kept[k] = true
			}
			continue
		}
		entries = r.refuseOthersKeys(name, entries, log)
		keys := make([]string, 0, len(entries))
		for _, e := range entries {
			keys = append(keys, e.Name)
			out.from[e.Name] = name
		}
		r.lastKeys[name] = keys
		out.entries = append(out.entries, entries...)
	}
	return out
}

// collectOne runs one collector, built on first use: it lives across
// passes. One whose configuration cannot work is unavailable, and built
// again next time.
func (r *runner) collectOne(ctx context.Context, name string, log *slog.Logger) ([]collectors.Entry, error) {
	inst, ok := r.instances[name]
	if !ok {
		var err error
		if inst, err = r.cfg.Sources[name].New(r.cfg.Globals(), log); err != nil {
			return nil, collectors.Unavailable(err)
		}
		r.instances[name] = inst
	}
	return inst.Collect(ctx)
}

// refuseOthersKeys drops the entries of collector name whose key is a
// configured collector's: another collector's always, its own after the
// first (its document, which comes first). A deployment (or a local
// file) named "heat" would otherwise replace the heat collector's whole
// document in the cache, and os-apply-config would render without the
// node's metadata; the reference stored both, the later winning.
func (r *runner) refuseOthersKeys(name string, entries []collectors.Entry, log *slog.Logger) []collectors.Entry {
	out := make([]collectors.Entry, 0, len(entries))
	own := false
	for _, e := range entries {
		if slices.Contains(r.cfg.Collectors, e.Name) {
			if e.Name != name || own {
				log.Error(fmt.Sprintf("Refusing metadata key %q from %s: it is the key of the %s collector", e.Name, name, e.Name))
				continue
			}
			own = true
		}
		out = append(out, e)
	}
	return out
}
