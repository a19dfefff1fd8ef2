package writer

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirs knows the directories of the files staged: which exist (with
// their filesystem), which this run made and for which file, and which
// have been swept of dead writers' staged files. Files are staged in
// parallel, so each directory is looked at once, by whichever file comes
// first, and the others wait for that.
type dirs struct {
	m   sync.Map // directory -> *dirState
	pid int      // names the staged files and trees
	// found tells that a sweep removed something: a writer died here.
	found atomic.Bool
}

type dirState struct {
	path string
	// at is where the directory is now: its path, or, inside a new tree
	// not yet in place, the same under the tree's staged name.
	at   string
	once sync.Once
	err  error
	dev  uint64
	tree *newTree // the new tree it is in, if this run made it
	// by is the lowest index of a file that needed it, so that a failure
	// at index i can leave the directories a run in order would have.
	by atomic.Int64

	sweep   sync.Once
	removed []string // dead writers' staged files removed from it
}

// made reports whether this run made the directory (in a new tree).
func (s *dirState) made() bool { return s.tree != nil }

func (d *dirs) state(dir string) *dirState {
	if v, ok := d.m.Load(dir); ok {
		return v.(*dirState)
	}
	s := &dirState{path: dir}
	s.by.Store(math.MaxInt64)
	v, _ := d.m.LoadOrStore(dir, s)
	return v.(*dirState)
}

// known reports whether a file needed dir already.
func (d *dirs) known(dir string) bool {
	_, ok := d.m.Load(dir)
	return ok
}

// need records that the file at index i needs the directory.
func (s *dirState) need(i int) {
	for {
		cur := s.by.Load()
		if int64(i) >= cur || s.by.CompareAndSwap(cur, int64(i)) {
			return
		}
	}
}

// mkdirAll makes dir and its missing parents (0777 less the umask, as the
// reference's makedirs) for the file at index i: the topmost missing one
// as a new tree (see newTree), the others inside it.
func (d *dirs) mkdirAll(dir string, i int) (*dirState, error) {
	s := d.state(dir)
	s.need(i)
	s.once.Do(func() { s.err = d.make(s, i) })
	return s, s.err
}

func (d *dirs) make(s *dirState, i int) error {
	dir := s.path
	p := filepath.Dir(dir)
	if _, known := d.m.Load(p); known && p != dir {
		// Under a directory this run made, dir is new: no stat needed (a
		// first render makes some 300).
		parent, err := d.mkdirAll(p, i)
		if err != nil {
			return err
		}
		if parent.made() {
			return s.makeIn(parent)
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		s.at, s.dev = dir, st.Dev
		return nil
	}
	if p == dir {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOENT}
	}
	parent, err := d.mkdirAll(p, i)
	if err != nil {
		return err
	}
	if parent.made() {
		return s.makeIn(parent)
	}
	return d.stageTree(s, parent)
}

// sweep removes dead writers' staged files from a directory this run did
// not make, once, before this run stages its own files there (see
// removeLeftovers, which takes this process's files for a dead writer's).
func (d *dirs) sweep(s *dirState) {
	if !s.made() {
		s.sweep.Do(func() {
			if s.removed = removeLeftovers(s.path); len(s.removed) > 0 {
				d.found.Store(true)
			}
		})
	}
}

// changed remembers the directories whose entries changed, to make them
// durable once at the end, with their filesystem.
type changed struct {
	order []string
	dev   map[string]uint64
}

func (c *changed) add(dir string, dev uint64) {
	if c.dev == nil {
		c.dev = map[string]uint64{}
	}
	if _, ok := c.dev[dir]; !ok {
		c.dev[dir] = dev
		c.order = append(c.order, dir)
	}
}

// maxDirFsyncs is how many changed directories of one filesystem are
// fsynced one by one; past it, one syncfs covers them all. Each fsync of a
// directory is a journal commit: a first render creates some 300
// directories, and 300 commits cost more than the rest of the run.
const maxDirFsyncs = 8

// sync makes the changed directory entries durable: an fsync per
// directory, or one syncfs for a filesystem with many changed directories.
func (c *changed) sync() error {
	byDev := map[uint64][]string{}
	var devs []uint64
	for _, dir := range c.order {
		dev := c.dev[dir]
		if _, ok := byDev[dev]; !ok {
			devs = append(devs, dev)
		}
		byDev[dev] = append(byDev[dev], dir)
	}
	for _, dev := range devs {
		dirs := byDev[dev]
		if len(dirs) > maxDirFsyncs {
			if err := syncDirFS(dirs[0]); err != nil {
				return &Error{Path: dirs[0], Err: err}
			}
			continue
		}
		for _, dir := range dirs {
			f, err := os.Open(dir)
			if err != nil {
				return &Error{Path: dir, Err: err}
			}
			err = syncDir(f)
			f.Close()
			if err != nil {
				return &Error{Path: dir, Err: err}
			}
		}
	}
	return nil
}
