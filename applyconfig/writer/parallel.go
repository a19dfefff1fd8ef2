package writer

import (
	"log/slog"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// forEach runs fn for 0..n-1 on up to GOMAXPROCS goroutines, taking no
// new index once one has failed, and returns the lowest index that failed
// with its error (-1, nil if none), so that the error reported is the one
// a loop in order would have stopped at.
// Planning and staging are a few system calls per file, a thousand files
// on a first render: on one goroutine the other cores sit idle.
func forEach(n int, fn func(i int) error) (int, error) {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if errs[i] = fn(i); errs[i] != nil {
				failed.Store(true)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}

// stage writes every changed file to a staging file beside its target,
// then makes them durable with one syncfs per filesystem. Directories are
// made first, in order, on one goroutine; the files are then written in
// parallel. On failure it leaves what a loop in order would have: no
// staged file, and only the directories of the files up to the failing one.
func stage(plan []planned, dirs *dirSet, pid int, log *slog.Logger) error {
	var writes []int
	umask := uint32(0)
	failAt, err := len(plan), error(nil)
	for i := range plan {
		p := &plan[i]
		if p.act != actWrite {
			continue
		}
		dirs.by = i
		if mkErr := dirs.mkdirAll(filepath.Dir(p.Path)); mkErr != nil {
			failAt, err = i, &Error{Path: p.Path, Err: mkErr}
			break
		}
		writes = append(writes, i)
	}
	if len(writes) > 0 {
		umask = currentUmask()
	}
	if err == nil {
		// After the directories are made: those this run made hold no
		// leftovers, and a first render need not list them.
		made := make(map[string]bool, len(dirs.made))
		for _, m := range dirs.made {
			made[m.path] = true
		}
		sweepLeftovers(plan, made, log)
	}
	if k, wErr := forEach(len(writes), func(j int) error {
		p := &plan[writes[j]]
		tmp, err := writeTemp(p, pid, umask)
		if err != nil {
			return &Error{Path: p.Path, Err: err}
		}
		p.tmp = tmp
		return nil
	}); wErr != nil {
		failAt, err = writes[k], wErr
	}
	if err != nil {
		removeTemps(plan)
		dirs.removeMadeAfter(failAt)
		return err
	}
	for _, dir := range dirs.filesystems() {
		if err := syncDirFS(dir); err != nil {
			removeTemps(plan)
			return &Error{Path: dir, Err: err}
		}
	}
	return nil
}

// removeMadeAfter removes the directories made for files after index i,
// deepest first (they are empty: their staged files are gone).
func (d *dirSet) removeMadeAfter(i int) {
	for j := len(d.made) - 1; j >= 0; j-- {
		if d.made[j].by > i {
			unix.Rmdir(d.made[j].path)
		}
	}
}
