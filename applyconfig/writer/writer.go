// Package writer puts rendered files in place all together and durably.
//
// It keeps the reference's rules (mode, owner and group kept from the file
// being replaced unless a control file says otherwise, 0644 for new files,
// empty renders deleted or not created when allow_empty is false, a symlink
// at the target replaced by a regular file) and adds three things:
//   - a file whose bytes, mode and owner already match is left alone, so
//     nothing watching the file sees a change that is not one;
//   - every file is staged before any is replaced, so a failure while
//     writing (full disk, bad directory) leaves every target as it was; a
//     directory that is not there is staged whole (tree.go);
//   - staged data reaches the disk before the renames (one syncfs per
//     filesystem rather than one fsync per file, which would cost as much as
//     the whole run) and the renames reach it before success is reported
//     (one fsync per changed directory, or one more syncfs where many
//     directories changed).
package writer

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// Result says what Batch.Commit did, path by path.
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
	tmp  string   // the staged file, until it is renamed
	tree *newTree // or the new tree it is written in
	mode uint32
	done bool // deleted
}

// replaced reports whether a file to write is in place: renamed, or its
// tree placed.
func (p *planned) replaced() bool {
	if p.tree != nil {
		return p.tree.placed.Load()
	}
	return p.tmp == ""
}

func planFile(f File) (planned, error) {
	p := planned{File: f}
	if !f.writes() {
		// os.path.exists follows symlinks: a dangling link is "absent".
		if _, err := os.Stat(f.Path); err == nil {
			p.act = actDelete
		} else {
			p.act = actNothing
		}
		return p, nil
	}
	p = planNew(f)
	var lst unix.Stat_t
	if err := unix.Lstat(f.Path, &lst); err != nil {
		return p, nil // a new file
	}
	st := lst
	if lst.Mode&unix.S_IFMT == unix.S_IFLNK {
		// The reference takes mode and owner from what the link points to.
		if err := unix.Stat(f.Path, &st); err != nil {
			return p, nil // a dangling link: as a new file
		}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return p, &Error{Path: f.Path, Err: syscall.EISDIR}
	}
	p.mode = st.Mode & 0o7777
	if f.UID < 0 {
		p.UID = int(st.Uid)
	}
	if f.GID < 0 {
		p.GID = int(st.Gid)
	}
	if f.Mode != 0 {
		p.mode = f.Mode
	}
	if lst.Mode&unix.S_IFMT == unix.S_IFREG && unchanged(p, &lst) {
		p.act = actUnchanged
	}
	return p, nil
}

// planNew plans f as a file that is not there: written with its mode, or
// 0644.
func planNew(f File) planned {
	p := planned{File: f, act: actWrite, mode: 0o644}
	if f.Mode != 0 {
		p.mode = f.Mode
	}
	return p
}

// writes reports whether f is written whatever is there: it has content,
// or may be empty.
func (f File) writes() bool { return f.AllowEmpty || len(f.Body) > 0 }

// unchanged reports whether the regular file described by st already has
// the wanted bytes, mode and owner.
func unchanged(p planned, st *unix.Stat_t) bool {
	if st.Size != int64(len(p.Body)) || st.Mode&0o7777 != p.mode ||
		(p.UID >= 0 && int(st.Uid) != p.UID) || (p.GID >= 0 && int(st.Gid) != p.GID) {
		return false
	}
	buf := compareBuffers.Get().(*[]byte)
	defer compareBuffers.Put(buf)
	old, err := readExactly(p.Path, len(p.Body), buf)
	return err == nil && bytes.Equal(old, p.Body)
}

// compareBuffers hold what unchanged reads: a steady run reads every
// output (2 MB in make bench's corpus), and new memory for each file
// would cost a page fault per 4 KiB and more collections.
var compareBuffers = sync.Pool{New: func() any { return new([]byte) }}

// readExactly reads n bytes of a regular file (plus one, to see it is no
// longer) into into's array, grown if needed. A read of a regular file stops short only at its end, so a
// read that brings fewer than asked for is the last: one read, not a
// second one that finds the end, for each unchanged file.
func readExactly(path string, n int, into *[]byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if cap(*into) < n+1 {
		*into = make([]byte, n+1)
	}
	buf := (*into)[:n+1]
	got := 0
	for got < len(buf) {
		m, err := unix.Read(fd, buf[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		got += m
		if m < len(buf)-(got-m) { // short: the end
			break
		}
	}
	return buf[:got], nil
}

// currentUmask is the process's umask, read from /proc: umask(2) cannot
// read it without setting it, for every thread at once. All bits (no
// file created with its final mode) when /proc does not say.
func currentUmask() uint32 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o777
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return uint32(m)
			}
		}
	}
	return 0o777
}

// rename is os.Rename without its lstat of the target (one failing
// system call per new file): planFile has already refused a directory
// there, and rename(2) refuses one that appeared since.
var rename = func(from, to string) error {
	if err := unix.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

func syncDirFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return syncFS(f)
}

// writeTemp writes p's body to a new staging file in the target's
// directory, which exists (see stageName), and returns its path.
func writeTemp(p *planned, pid int, umask uint32) (string, error) {
	mode, created := createMode(p.mode, umask)
	var fd int
	name, err := staged(filepath.Dir(p.Path), pid, func(name string) (err error) {
		fd, err = unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, mode)
		return err
	})
	if err == nil {
		err = fill(fd, name, p, created)
	}
	if err != nil {
		return "", err
	}
	return name, nil
}

// writeNew writes p's body to at, its name in a new tree.
func writeNew(p *planned, at string, umask uint32) error {
	mode, created := createMode(p.mode, umask)
	fd, err := unix.Open(at, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	return fill(fd, at, p, created)
}

// createMode is the mode to create a file of the given mode with, and
// whether that is its mode already. A file is created with its final
// mode when the umask leaves all of it and it has no set-id or sticky bit
// (which chown would clear, and which must come with an explicit chmod):
// no fchmod per file.
func createMode(mode, umask uint32) (uint32, bool) {
	if mode&^0o777 == 0 && mode&umask == 0 {
		return mode, true
	}
	return 0o600, false
}

// fill writes p's body, mode and owner to fd, a new file named name, and
// closes it; on failure it removes the file.
func fill(fd int, name string, p *planned, created bool) error {
	fail := func(err error) error {
		unix.Close(fd)
		unix.Unlink(name)
		return err
	}
	for body := p.Body; len(body) > 0; {
		n, err := unix.Write(fd, body)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail(&fs.PathError{Op: "write", Path: name, Err: err})
		}
		body = body[n:]
	}
	// chmod before chown, as the reference does (chown clears set-id bits).
	if !created {
		if err := unix.Fchmod(fd, p.mode); err != nil {
			return fail(&fs.PathError{Op: "chmod", Path: name, Err: err})
		}
	}
	if p.UID >= 0 || p.GID >= 0 {
		if err := unix.Fchown(fd, p.UID, p.GID); err != nil {
			return fail(&fs.PathError{Op: "chown", Path: name, Err: err})
		}
	}
	if err := unix.Close(fd); err != nil {
		unix.Unlink(name)
		return err
	}
	return nil
}

const suffixChars = "abcdefghijklmnopqrstuvwxyz0123456789_"

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = suffixChars[int(b[i])%len(suffixChars)]
	}
	return string(b[:])
}

func removeTemps(plan []planned) {
	for i := range plan {
		if plan[i].tmp != "" {
			os.Remove(plan[i].tmp)
			plan[i].tmp = ""
		}
	}
}
