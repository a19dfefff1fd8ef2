package occ

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
)

// pass is one collection: store what changed, run the command if anything
// did (or --force), and commit the changes only if it succeeded. It
// returns the command's exit status (Python's returncode) and whether
// anything changed.
func (r *runner) pass(ctx context.Context) (status int, changedAny bool, err error) {
	rec := agentstate.Pass{Version: agentstate.SchemaVersion, Started: time.Now()}
	defer func() { r.record(&rec, err) }()
	got := r.collect(ctx)
	rec.Collectors = got.results
	// The lock lives on the cache directory; a pass with nothing to store
	// and no cache yet neither needs it nor creates the directory (the
	// reference creates it only to store a key).
	if _, serr := os.Stat(r.cfg.CacheDir); serr == nil || len(got.entries) > 0 {
		r.setStage("the lock on " + r.cfg.CacheDir)
		lock, err := r.lockCache(ctx)
		if err != nil && ctx.Err() != nil {
			return 0, false, exitcode.With(exitcode.Terminated, err)
		}
		if err != nil {
			return 0, false, r.fail(err)
		}
		defer lock.Unlock()
		for _, p := range r.cache.RemoveLeftovers() {
			r.log.Info(fmt.Sprintf("Removed %s, left by a pass that did not finish.", p))
		}
	}
	paths, changed, err := r.store(ctx, got)
	if err != nil {
		return 0, false, r.fail(err)
	}
	for i, c := range rec.Collectors {
		for _, k := range changed {
			rec.Collectors[i].Changed = rec.Collectors[i].Changed || got.from[k] == c.Name
		}
	}
	if len(changed) == 0 && !r.cfg.Force {
		r.log.Debug("No changes detected.")
		rec.Converged = true
		return 0, false, nil
	}
	r.setStage("the command " + r.cfg.Command)
	started := time.Now()
	status = r.runCommand(ctx, paths)
	rec.Command = &agentstate.Command{Command: r.cfg.Command, Started: started, Seconds: time.Since(started).Seconds(), Exit: status}
	rec.Converged = status == 0
	r.log.Log(ctx, logging.LevelEvent, fmt.Sprintf("Command exited with status %d.", status), "command", r.cfg.Command,
		"command_exit", status, "command_seconds", strconv.FormatFloat(time.Since(started).Seconds(), 'f', 3, 64))
	switch {
	case status != 0 && ctx.Err() != nil:
		r.log.Warn(fmt.Sprintf("Command '%s' stopped: os-collect-config is stopping; will not cache new data.", r.cfg.Command))
		return status, len(changed) > 0, nil
	case status < 0:
		r.log.Error(fmt.Sprintf("Command failed, will not cache new data. Command '%s' %s.", r.cfg.Command, proc.DiedWith(syscall.Signal(-status))))
		return status, len(changed) > 0, nil
	case status != 0:
		r.log.Error(fmt.Sprintf("Command failed, will not cache new data. Command '%s' returned non-zero exit status %d.", r.cfg.Command, status))
		return status, len(changed) > 0, nil
	}
	if err := r.commit(changed); err != nil {
		return 0, false, r.fail(err)
	}
	return 0, len(changed) > 0, nil
}

// record leaves the pass's record for `tripleo-agent status`, outside
// the cache directory, which operators' scripts list. A failure to write
// it is a warning: it must not fail the pass.
func (r *runner) record(rec *agentstate.Pass, err error) {
	if err != nil {
		rec.Converged = false
	}
	rec.Ended = time.Now()
	defer r.writeMetrics(rec)
	if r.env.StatusDir == "" {
		return
	}
	werr := os.MkdirAll(r.env.StatusDir, 0o755)
	if werr == nil {
		path := filepath.Join(r.env.StatusDir, agentstate.PassFile)
		r.seedLastCommand(path)
		agentstate.RemoveStaged(path) // a killed pass's
		werr = agentstate.Write(path, rec)
	}
	if werr != nil {
		r.log.Warn(fmt.Sprintf("Could not write the status record: %v", werr))
	}
}

// lockCache takes the lock on the cache directory (created if needed, as
// the cache would), waiting while another os-collect-config holds it.
func (r *runner) lockCache(ctx context.Context) (*proc.Lock, error) {
	dir := r.cfg.CacheDir
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("creating cache directory %s: %w", dir, err)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cache directory %s: %w", dir, err)
	}
	lock, err := proc.WaitLock(ctx, f, func() {
		r.log.Warn(fmt.Sprintf("Waiting for another os-collect-config to finish with %s.", dir))
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking cache directory %s: %w", dir, err)
	}
	return lock, nil
}

// store writes every entry to the cache and returns the files of the
// pass, in order, and the keys that changed. What the command will read
// is on disk before it runs. A key given twice (two deployments of one
// name) is stored once, with its last content, and listed at each of its
// places, as the reference listed it; the reference stored each copy in
// turn, so the earlier one never matched .last and the command ran on
// every pass, forever.
func (r *runner) store(ctx context.Context, got collected) (paths, changed []string, err error) {
	last := make(map[string]int, len(got.entries))
	for i, e := range got.entries {
		last[e.Name] = i
	}
	stored := make(map[string]string, len(got.entries)) // key -> its file
	for i, e := range got.entries {
		if last[e.Name] != i {
			continue
		}
		if got.kept[e.Name] {
			if _, err := os.Stat(r.cache.Path(e.Name)); err == nil {
				stored[e.Name] = r.cache.Path(e.Name)
			}
			continue
		}
		committed := r.cache.Committed(e.Name)
		ch, path, err := r.cache.Store(e.Name, e.Content)
		if errors.Is(err, cache.ErrBadName) {
			r.log.Error(fmt.Sprintf("Refusing metadata key from %s: %v", got.from[e.Name], err))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("storing %s in the cache: %w", e.Name, err)
		}
		stored[e.Name] = path
		if ch {
			changed = append(changed, e.Name)
			change := "new"
			if committed {
				change = "modified"
			}
			r.log.Log(ctx, logging.LevelEvent, fmt.Sprintf("Metadata key %s changed (%s).", e.Name, change),
				"collector", got.from[e.Name], "key", e.Name, "change", change)
		}
	}
	var keys []string
	for i, e := range got.entries {
		path, ok := stored[e.Name]
		if !ok {
			continue
		}
		if i < last[e.Name] && slices.Index(keys, e.Name) < 0 {
			r.log.Warn(fmt.Sprintf("Metadata key %q is given more than once; only the last one (from %s) is stored.", e.Name, got.from[e.Name]))
		}
		paths, keys = append(paths, path), append(keys, e.Name)
	}
	if len(changed) > 0 {
		if _, err := r.cache.StoreMetaList(keys); err != nil {
			return nil, nil, fmt.Errorf("writing %s: %w", cache.MetaListFile, err)
		}
		if err := r.cache.Backup(r.cfg.BackupCacheDir); err != nil {
			r.log.Warn(fmt.Sprintf("Could not copy the cache to %s: %v", r.cfg.BackupCacheDir, err))
		}
	}
	if err := r.cache.Sync(); err != nil {
		r.log.Warn(fmt.Sprintf("Could not sync the cache: %v", err))
	}
	return paths, changed, nil
}

// commit records the changed keys as the ones the command succeeded with.
func (r *runner) commit(changed []string) error {
	for _, k := range changed {
		if err := r.cache.Commit(k); err != nil {
			return fmt.Errorf("committing %s: %w", k, err)
		}
	}
	if len(changed) > 0 {
		if err := r.cache.Sync(); err != nil {
			r.log.Warn(fmt.Sprintf("Could not sync the cache: %v", err))
		}
	}
	return nil
}
