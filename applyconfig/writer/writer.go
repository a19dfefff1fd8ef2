// Package writer puts rendered files in place all together and durably.
//
// It keeps the reference's rules (mode, owner and group kept from the file
// being replaced unless a control file says otherwise, 0644 for new files,
// empty renders deleted or not created when allow_empty is false, a symlink
// at the target replaced by a regular file) and adds three things:
//   - a file whose bytes, mode and owner already match is left alone, so
//     nothing watching the file sees a change that is not one;
//   - every file is staged before any is replaced, so a failure while
//     writing (full disk, bad directory) leaves every target as it was;
//   - staged data reaches the disk before the renames (one syncfs per
//     filesystem rather than one fsync per file, which would cost as much as
//     the whole run) and the renames reach it before success is reported
//     (one fsync per directory).
package writer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// File is one rendered template to put in place.
type File struct {
	Path       string
	Body       []byte
	Mode       uint32 // 0: keep the existing file's, else 0644
	UID, GID   int    // -1: keep the existing file's, else the process's
	AllowEmpty bool
}

// Result says what Apply did, path by path.
type Result struct {
	Written, Unchanged, Deleted []string
}

// Error names the file that could not be written.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("could not write %s: %v", e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// The durability calls, replaceable so tests can count them.
var (
	syncFS  = func(f *os.File) error { return unix.Syncfs(int(f.Fd())) }
	syncDir = func(f *os.File) error { return f.Sync() }
)

type action int

const (
	actWrite action = iota
	actDelete
	actUnchanged
	actNothing // empty, not allowed, and absent
)

type planned struct {
	File
	act  action
	tmp  string
	mode uint32
}

// Apply writes files. On error no target has been replaced or deleted,
// except when a rename fails part way through, which Apply reports.
func Apply(files []File, log *slog.Logger) (Result, error) {
	var res Result
	plan := make([]planned, len(files))
	for i, f := range files {
		p, err := planFile(f)
		if err != nil {
			return res, err
		}
		plan[i] = p
	}

	dirs := newDirSet()
	if err := stage(plan, dirs); err != nil {
		return res, err
	}

	for i := range plan {
		p := &plan[i]
		switch p.act {
		case actNothing:
			log.Info("not creating empty " + p.Path)
		case actUnchanged:
			log.Debug("unchanged " + p.Path)
			res.Unchanged = append(res.Unchanged, p.Path)
		case actWrite:
			log.Info("writing " + p.Path)
			if err := os.Rename(p.tmp, p.Path); err != nil {
				removeTemps(plan[i:])
				return res, &Error{Path: p.Path, Err: err}
			}
			p.tmp = ""
			dirs.add(filepath.Dir(p.Path))
			res.Written = append(res.Written, p.Path)
		case actDelete:
			log.Info("deleting " + p.Path)
			if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				removeTemps(plan[i:])
				return res, &Error{Path: p.Path, Err: err}
			}
			dirs.add(filepath.Dir(p.Path))
			res.Deleted = append(res.Deleted, p.Path)
		}
	}
	return res, dirs.sync()
}

func planFile(f File) (planned, error) {
	p := planned{File: f}
	if !f.AllowEmpty && len(f.Body) == 0 {
		// os.path.exists follows symlinks: a dangling link is "absent".
		if _, err := os.Stat(f.Path); err == nil {
			p.act = actDelete
		} else {
			p.act = actNothing
		}
		return p, nil
	}
	p.act = actWrite
	p.mode = 0o644
	st, err := os.Stat(f.Path) // follows symlinks, as the reference's os.stat
	if err == nil {
		if st.IsDir() {
			return p, &Error{Path: f.Path, Err: syscall.EISDIR}
		}
		sys := st.Sys().(*syscall.Stat_t)
		p.mode = sys.Mode & 0o7777
		if f.UID < 0 {
			p.UID = int(sys.Uid)
		}
		if f.GID < 0 {
			p.GID = int(sys.Gid)
		}
	}
	if f.Mode != 0 {
		p.mode = f.Mode
	}
	if unchanged(p) {
		p.act = actUnchanged
	}
	return p, nil
}

// unchanged reports whether the target is a regular file (not a link) with
// the wanted bytes, mode and owner already.
func unchanged(p planned) bool {
	st, err := os.Lstat(p.Path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(p.Body)) {
		return false
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Mode&0o7777 != p.mode ||
		(p.UID >= 0 && int(sys.Uid) != p.UID) ||
		(p.GID >= 0 && int(sys.Gid) != p.GID) {
		return false
	}
	old, err := os.ReadFile(p.Path)
	return err == nil && bytes.Equal(old, p.Body)
}

// stage writes every changed file to a temporary file beside its target,
// then makes them durable with one syncfs per filesystem.
func stage(plan []planned, dirs *dirSet) error {
	syncFDs := map[uint64]*os.File{} // one open file per filesystem
	defer func() {
		for _, f := range syncFDs {
			f.Close()
		}
	}()
	for i := range plan {
		p := &plan[i]
		if p.act != actWrite {
			continue
		}
		tmp, dev, err := writeTemp(p, dirs)
		if err != nil {
			removeTemps(plan)
			return &Error{Path: p.Path, Err: err}
		}
		p.tmp = tmp.Name()
		if _, ok := syncFDs[dev]; ok {
			tmp.Close()
		} else {
			syncFDs[dev] = tmp
		}
	}
	for _, f := range syncFDs {
		if err := syncFS(f); err != nil {
			removeTemps(plan)
			return &Error{Path: f.Name(), Err: err}
		}
	}
	return nil
}

func writeTemp(p *planned, dirs *dirSet) (*os.File, uint64, error) {
	dir := filepath.Dir(p.Path)
	if err := dirs.mkdirAll(dir); err != nil {
		return nil, 0, err
	}
	tmp, err := os.CreateTemp(dir, "tmp")
	if err != nil {
		return nil, 0, err
	}
	fail := func(err error) (*os.File, uint64, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, 0, err
	}
	if _, err := tmp.Write(p.Body); err != nil {
		return fail(err)
	}
	// chmod before chown, as the reference does (chown clears set-id bits).
	if err := tmp.Chmod(fs.FileMode(p.mode&0o777) | modeBits(p.mode)); err != nil {
		return fail(err)
	}
	if p.UID >= 0 || p.GID >= 0 {
		if err := tmp.Chown(p.UID, p.GID); err != nil {
			return fail(err)
		}
	}
	st, err := tmp.Stat()
	if err != nil {
		return fail(err)
	}
	return tmp, st.Sys().(*syscall.Stat_t).Dev, nil
}

// modeBits maps the set-id and sticky bits of a Unix mode to Go's.
func modeBits(m uint32) fs.FileMode {
	var out fs.FileMode
	if m&syscall.S_ISUID != 0 {
		out |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		out |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		out |= fs.ModeSticky
	}
	return out
}

func removeTemps(plan []planned) {
	for i := range plan {
		if plan[i].tmp != "" {
			os.Remove(plan[i].tmp)
			plan[i].tmp = ""
		}
	}
}

// dirSet remembers the directories whose entries changed, to fsync each
// once at the end.
type dirSet struct {
	order []string
	seen  map[string]bool
}

func newDirSet() *dirSet { return &dirSet{seen: map[string]bool{}} }

func (d *dirSet) add(dir string) {
	if !d.seen[dir] {
		d.seen[dir] = true
		d.order = append(d.order, dir)
	}
}

// mkdirAll creates dir and its missing parents (0777 less the umask, as
// the reference's makedirs) and records each parent that gained an entry.
func (d *dirSet) mkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := d.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	d.add(filepath.Dir(dir))
	return nil
}

func (d *dirSet) sync() error {
	for _, dir := range d.order {
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
	return nil
}
