package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The bound reads the tree with plain system calls: os.ReadFile costs
// twice as many here (an epoll registration, a read to see the end),
// and os.ReadDir's sort is of no use. Measured on this VM's tmpfs, 1000
// templates read in 25 ms with os.ReadFile, 12 ms this way.

// scanner lists the template tree and reads (and, if asked, parses)
// every template: one goroutine per directory, GOMAXPROCS at a time.
type scanner struct {
	root  string
	out   string // if set, each template's existing output is read too
	parse bool
	slots chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	list  []*boundTemplate
	errs  []error
}

// scan fills r.list from r.root.
func (r *boundRun) scan(parse bool) error {
	s := &scanner{root: r.root, out: r.out, parse: parse, slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	s.wg.Add(1)
	s.dir("")
	s.wg.Wait()
	r.list = s.list
	return errors.Join(s.errs...)
}

// dir handles one directory (rel to the root) and starts its
// subdirectories; a file named X.oac is X's control file.
func (s *scanner) dir(rel string) {
	defer s.wg.Done()
	s.slots <- struct{}{}
	defer func() { <-s.slots }()
	list, err := s.readDir(rel)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, list...)
	if err != nil {
		s.errs = append(s.errs, err)
	}
}

func (s *scanner) readDir(rel string) ([]*boundTemplate, error) {
	path := filepath.Join(s.root, rel)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("template dir %s: %w", path, err)
	}
	defer unix.Close(fd)
	files, dirs, err := readDirents(fd, path)
	if err != nil {
		return nil, fmt.Errorf("template dir %s: %w", path, err)
	}
	for _, d := range dirs {
		s.wg.Add(1)
		go s.dir(filepath.Join(rel, d))
	}
	oac := map[string]bool{}
	for _, f := range files {
		if base, ok := strings.CutSuffix(f, ".oac"); ok {
			oac[base] = true
		}
	}
	outFd := -1
	if s.out != "" {
		if outFd, err = openOutputDir(filepath.Join(s.out, rel)); err != nil {
			return nil, err
		}
		if outFd >= 0 {
			defer unix.Close(outFd)
		}
	}
	var list []*boundTemplate
	for _, f := range files {
		if strings.HasSuffix(f, ".oac") {
			continue
		}
		t := &boundTemplate{rel: filepath.Join(rel, f), oac: oac[f], mode: 0o644, allowEmpty: true}
		if err := t.read(fd, f, filepath.Join(path, f)); err != nil {
			return list, err
		}
		if outFd >= 0 {
			if err := t.old.read(outFd, f, filepath.Join(s.out, t.rel)); err != nil {
				return list, err
			}
		}
		if s.parse {
			if err := t.parse(); err != nil {
				return list, err
			}
		}
		list = append(list, t)
	}
	return list, nil
}

// readDirents lists an open directory, unsorted (os.ReadDir sorts):
// regular files and directories by name, from the types getdents gives
// (lstat where it gives none); other kinds are left out. The listing
// reads through a duplicate, so that fd stays open for the reads.
func readDirents(fd int, path string) (files, dirs []string, err error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, nil, err
	}
	d := os.NewFile(uintptr(dup), path) // the entries' lstat goes by path
	defer d.Close()
	entries, err := d.ReadDir(-1)
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			files = append(files, e.Name())
		case e.IsDir():
			dirs = append(dirs, e.Name())
		}
	}
	return files, dirs, err
}

// read reads the template name in the open directory dir, and its
// control file. An executable template is run, not rendered, by
// os-apply-config: the bound does not do that, and the corpus has none.
func (t *boundTemplate) read(dir int, name, path string) error {
	var exec bool
	var err error
	if t.text, exec, err = readAt(dir, name); err != nil {
		return fmt.Errorf("template %s: %w", path, err)
	}
	if exec {
		return fmt.Errorf("template %s: executable; the bound renders mustache only", path)
	}
	if !t.oac {
		return nil
	}
	ctl, _, err := readAt(dir, name+".oac")
	if err != nil {
		return fmt.Errorf("control file %s.oac: %w", path, err)
	}
	return t.control(ctl, path+".oac")
}

// readAt reads a file of dir: open, fstat (its size; an executable
// template must be told apart), one read when the size is right, close.
func readAt(dir int, name string) (data []byte, exec bool, err error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, err
	}
	if st.Mode&0o111 != 0 {
		return nil, true, nil
	}
	data, err = readFd(fd, st.Size)
	return data, false, err
}

// readFd reads an open regular file of the given size: one read when the
// size is right.
func readFd(fd int, size int64) ([]byte, error) {
	data := make([]byte, 0, size)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		data = data[:len(data)+n]
		// A regular file's read stops short only at its end.
		if n == 0 || len(data) < cap(data) || len(data) == int(size) {
			return data, nil
		}
	}
}
