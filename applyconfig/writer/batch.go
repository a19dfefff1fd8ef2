package writer

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Batch puts files in place as they come. Stage plans a file and, when it
// must be written, writes it to a staging file beside its target at once,
// so that os-apply-config stages each template as soon as it is rendered
// and the disk works while the rest render. Commit then makes the staged
// files durable and renames them all; Abort takes back what was staged.
// Either way no target changes before Commit, and after a failure the
// directories left are those a run in order would have made.
type Batch struct {
	umask func() uint32
	plan  []planned
	// planErr and stageErr are each file's failure, if any.
	planErr, stageErr []error
	dirs              dirs
}

// NewBatch makes a batch for n files, indexed 0..n-1 in the order they
// are to be put in place.
func NewBatch(n int) *Batch {
	return &Batch{
		umask:    sync.OnceValue(currentUmask),
		plan:     make([]planned, n),
		planErr:  make([]error, n),
		stageErr: make([]error, n),
		dirs:     dirs{pid: os.Getpid()},
	}
}

// Stage plans file i and stages it if it must be written. It may be
// called from several goroutines, once for each index. Its failures are
// reported by Commit, in order.
func (b *Batch) Stage(i int, f File) {
	var p planned
	var err error
	if b.inMadeDir(i, f) {
		// A directory this run made holds only what it made: nothing to
		// look up (a first render writes some 1000 files in 300 new
		// directories; the lookups were a twentieth of its time).
		p = planNew(f)
	} else if p, err = planFile(f); err != nil {
		b.planErr[i] = err
		return
	}
	if p.act == actWrite {
		var dir *dirState
		if dir, err = b.dirs.mkdirAll(filepath.Dir(p.Path), i); err == nil && dir.made() {
			// In a new tree: under its own name, placed with the tree.
			p.tree = dir.tree
			err = writeNew(&p, filepath.Join(dir.at, filepath.Base(p.Path)), b.umask())
		} else if err == nil {
			b.dirs.sweep(dir)
			p.tmp, err = writeTemp(&p, b.dirs.pid, b.umask())
		}
		if err != nil {
			b.stageErr[i] = &Error{Path: p.Path, Err: err}
		}
	}
	p.Body = nil // compared and staged: only its name is needed now
	b.plan[i] = p
}

// inMadeDir reports whether file i is written into a directory this run
// made, one that an earlier staged file already needed (its first file is
// planned as any other).
func (b *Batch) inMadeDir(i int, f File) bool {
	dir := filepath.Dir(f.Path)
	if !f.writes() || !b.dirs.known(dir) {
		return false
	}
	s, err := b.dirs.mkdirAll(dir, i)
	return err == nil && s.made()
}

// Abort removes what was staged and every directory made for it.
func (b *Batch) Abort() {
	removeTemps(b.plan)
	b.dirs.settle(b.plan, -1)
}

// discard removes what was staged and not put in place.
func (b *Batch) discard() {
	removeTemps(b.plan)
	b.dirs.discardTrees()
}

// Commit checks that every file was planned and staged, makes the staged
// files durable (one syncfs per filesystem), renames them over their
// targets, deletes the files that render empty where that is not
// allowed, and makes the directory entries durable. It logs, in order,
// what it does to each file. On error no target has been replaced or
// deleted, except when a rename or deletion fails part way through: then
// the Result lists the files that were, and the error names the first in
// order that failed.
func (b *Batch) Commit(log *slog.Logger) (Result, error) {
	var res Result
	plan := b.plan
	// A file that cannot be planned (its target a directory) fails the
	// run before anything is made, as the planning of all files came
	// first when they were staged in order.
	for _, err := range b.planErr {
		if err != nil {
			b.Abort()
			return res, err
		}
	}
	for i, err := range b.stageErr {
		if err != nil {
			removeTemps(plan)
			b.dirs.settle(plan, i)
			return res, err
		}
	}
	b.sweepRest(log)

	// One syncfs per filesystem staged to, in the first staged file's
	// directory.
	fsDirs := map[uint64]string{}
	var order []string
	for i := range plan {
		if plan[i].act != actWrite {
			continue
		}
		dir := b.dirs.state(filepath.Dir(plan[i].Path))
		if fsDirs[dir.dev] == "" {
			fsDirs[dir.dev] = dir.at
			order = append(order, dir.at)
		}
	}
	for _, dir := range order {
		if err := syncDirFS(dir); err != nil {
			b.discard()
			return res, &Error{Path: dir, Err: err}
		}
	}

	// The renames and deletions run in parallel: a first render renames a
	// thousand files, one system call each, and on one goroutine the
	// other cores sit idle. They are logged and counted in plan order
	// afterwards.
	failAt, err := forEach(len(plan), func(i int) error {
		p := &plan[i]
		switch p.act {
		case actWrite:
			if p.tree != nil {
				if err := p.tree.place(); err != nil {
					return &Error{Path: p.Path, Err: err}
				}
				return nil
			}
			if err := rename(p.tmp, p.Path); err != nil {
				return &Error{Path: p.Path, Err: err}
			}
			p.tmp = ""
		case actDelete:
			if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return &Error{Path: p.Path, Err: err}
			}
			p.done = true
		}
		return nil
	})
	var dirty changed
	for i := range plan {
		p := &plan[i]
		switch {
		case p.act == actNothing:
			log.Info("not creating empty " + p.Path)
		case p.act == actUnchanged:
			log.Debug("unchanged " + p.Path)
			res.Unchanged = append(res.Unchanged, p.Path)
		case p.act == actWrite && (p.replaced() || i == failAt):
			log.Info("writing " + p.Path)
			if p.replaced() {
				// A new tree's entries were made durable with its files:
				// only the one naming it is new.
				dir := filepath.Dir(p.Path)
				if p.tree != nil {
					dir = filepath.Dir(p.tree.top.path)
				}
				dirty.add(dir, b.dirs.state(dir).dev)
				res.Written = append(res.Written, p.Path)
			}
		case p.act == actDelete && (p.done || i == failAt):
			log.Info("deleting " + p.Path)
			if p.done {
				dir := filepath.Dir(p.Path)
				var st unix.Stat_t
				if err := unix.Stat(dir, &st); err != nil {
					return res, &Error{Path: dir, Err: err}
				}
				dirty.add(dir, st.Dev)
				res.Deleted = append(res.Deleted, p.Path)
			}
		}
	}
	if err != nil {
		// Every file replaced or deleted is listed in res; the others
		// are as they were, their staged files removed.
		b.discard()
		return res, err
	}
	return res, dirty.sync()
}
