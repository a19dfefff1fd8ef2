package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The steady bound is the least a correct os-apply-config on
// cbroglie/mustache can spend on the steady case: a complete previous
// render in the output dir, one service's values changed. It must decode
// the metadata, read and parse every template, render it, and read every
// existing output to compare (a program that keeps nothing between runs
// cannot know what changed otherwise), then write the few that changed
// and make them durable. Like the fresh bound (bound.go) it runs in a
// worker process, timed in-process, and spares itself what a real one
// must also do: no process start, no Python-alike formatting, no
// temporary names, renames or directory syncs, no owner checks, no log.
//
// It writes in place (open O_TRUNC, write): a power cut may leave a file
// empty or half written, which no correct program may; and makes the
// writes durable the cheaper of two ways measured here (steadySync).
// Existing outputs are read while the metadata decodes, with the
// templates: neither needs the metadata.

// output is a template's existing output, as the steady bound finds it.
type output struct {
	exists bool
	mode   fs.FileMode // permission bits
	data   []byte
}

// syncMethod is how the steady bound makes its writes durable.
type syncMethod int

const (
	syncOnce      syncMethod = iota // one syncfs after the writes, if any
	fdatasyncEach                   // fdatasync of each written file, by the goroutine that wrote it
)

// steadySync is the cheaper of the two on this machine: for the steady
// case's 8 files, one syncfs took 1.3-1.8 ms on ext4, 8 fdatasyncs on
// two threads 2.2-2.6 ms; on tmpfs both cost nothing (README.md).
var steadySync = syncOnce

// steadyBound returns the bound of the steady case for these inputs. Its
// second result is how many outputs it wrote, changed modes of, or
// deleted.
func steadyBound(templates string, meta []string, how syncMethod) func(outDir string) (time.Duration, int, error) {
	return func(outDir string) (time.Duration, int, error) {
		start := time.Now()
		r := &boundRun{root: templates, out: outDir, meta: meta}
		decoded := make(chan error, 1)
		go func() { decoded <- r.decode() }()
		err := r.scan(true)
		if derr := <-decoded; err == nil {
			err = derr
		}
		var changed int
		if err == nil {
			changed, err = r.renderUpdate(outDir, how)
		}
		if err == nil && changed > 0 && how == syncOnce {
			err = syncFilesystem(outDir)
		}
		return time.Since(start), changed, err
	}
}

// renderUpdate renders each template, compares it with the existing
// output and, where they differ, writes it in place.
func (r *boundRun) renderUpdate(outDir string, how syncMethod) (int, error) {
	dirs := newDirMaker(outDir)
	var changed atomic.Int64
	err := r.renderEach(func(t *boundTemplate, body []byte) error {
		did, err := dirs.update(t, body, how)
		if did {
			changed.Add(1)
		}
		return err
	})
	return int(changed.Load()), err
}

// update brings t's output to body, the least way: nothing when it
// already has body and its mode; a chmod when only the mode differs; an
// unlink when body is empty and not allowed; else an in-place write.
func (m *dirMaker) update(t *boundTemplate, body []byte, how syncMethod) (bool, error) {
	path := filepath.Join(m.root, t.rel)
	old := &t.old
	mode := old.mode
	if t.modeSet || !old.exists {
		mode = t.mode
	}
	switch {
	case len(body) == 0 && !t.allowEmpty:
		if !old.exists {
			return false, nil
		}
		if err := unix.Unlink(path); err != nil {
			return true, fmt.Errorf("delete %s: %w", path, err)
		}
		return true, nil
	case old.exists && bytes.Equal(old.data, body):
		if mode == old.mode {
			return false, nil
		}
		if err := unix.Chmod(path, uint32(mode)); err != nil {
			return true, fmt.Errorf("chmod %s: %w", path, err)
		}
		return true, nil
	}
	if !old.exists {
		if err := m.mkdir(filepath.Dir(path)); err != nil {
			return true, err
		}
	}
	return true, writeInPlace(path, body, mode, old.exists && mode != old.mode, how)
}

// writeInPlace truncates and writes path, chmods it if asked (open's mode
// applies to new files only) and, with fdatasyncEach, syncs its data:
// open, write, close, no more (os.WriteFile adds an epoll registration).
func writeInPlace(path string, body []byte, mode fs.FileMode, chmod bool, how syncMethod) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, uint32(mode))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for len(body) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, body)
		body = body[n:]
	}
	if err == nil && chmod {
		err = unix.Fchmod(fd, uint32(mode))
	}
	if err == nil && how == fdatasyncEach {
		err = unix.Fdatasync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openOutputDir opens an output directory for reading its files; -1
// when it does not exist (every output under it is new).
func openOutputDir(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("output dir %s: %w", dir, err)
	}
	return fd, nil
}

// read reads the output name of the open directory dir, if it is there:
// open, fstat, one read, close.
func (o *output) read(dir int, name, path string) error {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("output %s: not a regular file; the bound handles only those", path)
	}
	if o.data, err = readFd(fd, st.Size); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	o.exists, o.mode = true, fs.FileMode(st.Mode&0o7777)
	return nil
}
