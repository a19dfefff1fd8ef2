package writer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirSet remembers the directories whose entries changed, to make them
// durable once at the end, the directories known to exist (with their
// filesystem), and one directory per filesystem written to, for syncfs.
type dirSet struct {
	order  []string
	seen   map[string]bool
	exists map[string]uint64 // directory -> device
	fsDirs map[uint64]string
	made   []madeDir // directories this run created, in order
	// madeSet holds the paths of made.
	madeSet map[string]bool
	by      int // the index of the file mkdirAll works for
}

// madeDir is a directory created for the file at index by.
type madeDir struct {
	path string
	by   int
}

// maxDirFsyncs is how many changed directories of one filesystem are
// fsynced one by one; past it, one syncfs covers them all. Each fsync of a
// directory is a journal commit: a first render creates some 300
// directories, and 300 commits cost more than the rest of the run.
const maxDirFsyncs = 8

func newDirSet() *dirSet {
	return &dirSet{seen: map[string]bool{}, exists: map[string]uint64{}, fsDirs: map[uint64]string{}, madeSet: map[string]bool{}}
}

func (d *dirSet) add(dir string) {
	if !d.seen[dir] {
		d.seen[dir] = true
		d.order = append(d.order, dir)
	}
}

// filesystems returns one directory on each filesystem written to.
func (d *dirSet) filesystems() []string {
	out := make([]string, 0, len(d.fsDirs))
	for _, dir := range d.fsDirs {
		out = append(out, dir)
	}
	return out
}

// mkdirAll creates dir and its missing parents (0777 less the umask, as
// the reference's makedirs) and records each parent that gained an entry.
func (d *dirSet) mkdirAll(dir string) error {
	if _, ok := d.exists[dir]; ok {
		return nil
	}
	var st unix.Stat_t
	parent := filepath.Dir(dir)
	if d.madeSet[parent] && unix.Mkdir(dir, 0o777) == nil {
		// A directory this run made holds only what it made: dir is
		// new, no stat needed before (a first render makes some 300).
		// Should the mkdir fail, the stat below decides as for others.
		d.add(parent)
		d.made = append(d.made, madeDir{dir, d.by})
		st.Dev = d.exists[parent]
	} else if err := unix.Stat(dir, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
	} else {
		if parent != dir {
			if err := d.mkdirAll(parent); err != nil {
				return err
			}
		}
		err := os.Mkdir(dir, 0o777)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		d.add(parent)
		if dev, ok := d.exists[parent]; ok && err == nil {
			// Made here: on its parent's filesystem (nothing is mounted
			// on it yet), no stat needed.
			d.made = append(d.made, madeDir{dir, d.by})
			st.Dev = dev
		} else {
			if err == nil {
				d.made = append(d.made, madeDir{dir, d.by})
			}
			if err := unix.Stat(dir, &st); err != nil {
				return err
			}
		}
	}
	d.exists[dir] = st.Dev
	if n := len(d.made); n > 0 && d.made[n-1].path == dir {
		d.madeSet[dir] = true
	}
	if _, ok := d.fsDirs[st.Dev]; !ok {
		d.fsDirs[st.Dev] = dir
	}
	return nil
}

// sync makes the changed directory entries durable: an fsync per
// directory, or one syncfs for a filesystem with many changed directories.
func (d *dirSet) sync() error {
	byDev := map[uint64][]string{}
	var devs []uint64
	for _, dir := range d.order {
		dev, ok := d.exists[dir]
		if !ok { // the directory of a deleted file
			var st unix.Stat_t
			if err := unix.Stat(dir, &st); err != nil {
				return &Error{Path: dir, Err: err}
			}
			dev = st.Dev
		}
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
