package writer

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	m sync.Map // directory -> *dirState
}

type dirState struct {
	path string
	once sync.Once
	err  error
	dev  uint64
	made bool // this run created it
	// by is the lowest index of a file that needed it, so that a failure
	// at index i can leave the directories a run in order would have.
	by atomic.Int64

	sweep   sync.Once
	removed []string // dead writers' staged files removed from it
}

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
// reference's makedirs) for the file at index i.
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
		// A directory this run made holds only what it made: dir is new,
		// no stat needed before (a first render makes some 300). Should
		// the mkdir fail, the stat below decides as for others.
		if parent, err := d.mkdirAll(p, i); err == nil && parent.made && unix.Mkdir(dir, 0o777) == nil {
			s.made, s.dev = true, parent.dev
			return nil
		}
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		s.dev = st.Dev
		return nil
	}
	var parent *dirState
	if p != dir {
		var err error
		if parent, err = d.mkdirAll(p, i); err != nil {
			return err
		}
	}
	err := os.Mkdir(dir, 0o777)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err == nil && parent != nil {
		// Made here: on its parent's filesystem (nothing is mounted on
		// it yet), no stat needed.
		s.made, s.dev = true, parent.dev
		return nil
	}
	s.made = err == nil
	if err := unix.Stat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	s.dev = st.Dev
	return nil
}

// swept removes dead writers' staged files from a directory this run did
// not make, once, before this run stages its own files there (see
// removeLeftovers, which takes this process's files for a dead writer's).
func (s *dirState) swept() {
	if !s.made {
		s.sweep.Do(func() { s.removed = removeLeftovers(s.path) })
	}
}

// removeMadeAfter removes the directories this run made only for files
// after index i, deepest first (they are empty: their staged files are
// gone).
func (d *dirs) removeMadeAfter(i int) {
	var made []string
	d.m.Range(func(_, v any) bool {
		if s := v.(*dirState); s.made && s.by.Load() > int64(i) {
			made = append(made, s.path)
		}
		return true
	})
	sort.Slice(made, func(a, b int) bool { return strings.Count(made[a], "/") > strings.Count(made[b], "/") })
	for _, dir := range made {
		unix.Rmdir(dir)
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
