// Package cache is os-collect-config's metadata cache: per source key,
// KEY.json holds the latest content, KEY.json.orig the first content ever
// stored, and KEY.json.last the content of the last successful command
// run; os_config_files.json lists the files of the last changed pass. The
// layout, formats (Python's json.dumps with indent=1, mode 0600) and the
// change rules are the reference's.
package cache

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// The cache's default places, os-collect-config's cachedir and
// backup-cachedir: os-apply-config (applyconfig/metadata) reads the list
// of a pass there, and tripleo-agent-status bundles them.
const (
	DefaultDir       = "/var/lib/os-collect-config"
	DefaultBackupDir = "/var/run/os-collect-config"
)

// MetaListName is the key of the list of files of a pass, MetaListFile
// its file in the cache.
const (
	MetaListName = "os_config_files"
	MetaListFile = MetaListName + ".json"
)

// Cache is a cache directory.
type Cache struct {
	Dir string
	// dirty: written to since the last Sync.
	dirty bool
}

// ErrBadName is a key that would not name a file inside the cache.
var ErrBadName = errors.New("not a valid cache key")

// MaxNameBytes is the longest key: its longest file, KEY.json.orig or
// KEY.json.last, must fit in a file name (NAME_MAX, 255 bytes).
const MaxNameBytes = 255 - len(".json.orig")

// CheckName refuses keys that would escape the cache directory or cannot
// be file names: empty, ".", "..", containing "/" or NUL, or longer than
// MaxNameBytes. The reference took any deployment name, so "../x" wrote
// outside the cache, and a name too long for its .orig crashed the pass
// (ours stored it and failed every commit, so no key was ever committed).
// Also refused: a ":" (OS_CONFIG_FILES is a colon-separated list, so the
// command read two wrong paths instead of the key's file), control
// characters (a newline split the log lines that name the key), and the
// key of the list of files itself.
func CheckName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%w: %q is not a file name", ErrBadName, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q holds a slash or NUL", ErrBadName, name)
	case len(name) > MaxNameBytes:
		return fmt.Errorf("%w: %q is longer than %d bytes", ErrBadName, name, MaxNameBytes)
	case strings.Contains(name, ":"):
		return fmt.Errorf("%w: %q holds a colon, which OS_CONFIG_FILES cannot carry", ErrBadName, name)
	case strings.IndexFunc(name, isControl) >= 0:
		return fmt.Errorf("%w: %q holds a control character", ErrBadName, name)
	case name == MetaListName:
		return fmt.Errorf("%w: %q is the cache's list of files", ErrBadName, name)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// Path is the file of a key.
func (c *Cache) Path(name string) string { return pypath.Join(c.Dir, name+".json") }

// Store writes content for name and reports whether it changed: the key
// was never stored before, has no committed (.last) content, or its
// committed content is not equal as JSON (key order and formatting do
// not count; 1 == 1.0 == true, as in Python).
//
// The text is streamed, never held: compared with the file already there
// as it is encoded, and written only when it differs; the .last is
// compared byte for byte, and parsed only when its bytes differ (what a
// byte compare cannot tell: equal JSON written otherwise). A 100 MB key
// costs its parsed document and buffers, not four more copies of it.
func (c *Cache) Store(name string, content jsondoc.Value) (changed bool, path string, err error) {
	if err := CheckName(name); err != nil {
		return false, "", err
	}
	if err := c.ensureDir(); err != nil {
		return false, "", err
	}
	path = c.Path(name)
	encode := func(w *bufio.Writer) error { return jsondoc.WriteIndent(w, content, 1) }
	orig := path + ".orig"
	if _, err := os.Stat(orig); errors.Is(err, fs.ErrNotExist) {
		if err := c.writeWith(orig, encode); err != nil {
			return false, "", err
		}
		changed = true
	}
	// An identical file is left alone (the reference rewrote every key on
	// every pass): no mtime churn, nothing to sync.
	if !sameBytes(path, encode) {
		if err := c.writeWith(path, encode); err != nil {
			return false, "", err
		}
	}
	if changed {
		return true, path, nil
	}
	if same, err := sameFiles(path, path+".last"); err != nil || same {
		return err != nil, path, nil // no .last (or unreadable): a change
	}
	last, err := os.ReadFile(path + ".last")
	if err != nil {
		return true, path, nil
	}
	then, err := jsondoc.LoadsOwned(last)
	if err != nil {
		return true, path, nil // an unreadable .last is a change, not a crash
	}
	return !jsondoc.Equal(then, content), path, nil
}

// Committed reports whether a command ever ran successfully with name
// (it has a .last file).
func (c *Cache) Committed(name string) bool {
	_, err := os.Stat(c.Path(name) + ".last")
	return err == nil
}

// Commit records name's current content as the last one a command ran
// with successfully (a copy of its file, streamed).
func (c *Cache) Commit(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	path := c.Path(name)
	src, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	return c.writeWith(path+".last", func(w *bufio.Writer) error {
		if _, err := w.ReadFrom(src); err != nil {
			return err
		}
		return w.Flush()
	})
}

// StoreMetaList writes os_config_files.json: the JSON list of the files of
// names, in order.
func (c *Cache) StoreMetaList(names []string) (string, error) {
	if err := c.ensureDir(); err != nil {
		return "", err
	}
	list := make([]jsondoc.Value, len(names))
	for i, n := range names {
		list[i] = c.Path(n)
	}
	dest := c.Path(MetaListName)
	return dest, c.write(dest, []byte(jsondoc.Dumps(list)))
}

// Backup replaces dst with a copy of the cache directory (the reference's
// backup-cachedir, read by os-apply-config as a fallback). Nothing happens
// when the cache directory does not exist.
func (c *Cache) Backup(dst string) error {
	if _, err := os.Stat(c.Dir); err != nil {
		return nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	// Missing parents are made as Python's makedirs makes them (0777
	// less the umask); the copy itself keeps the cache's mode.
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return err
	}
	return copyTree(c.Dir, dst)
}

// ensureDir creates the cache directory, but not its parents (the
// reference's single mkdir), with 0700: it holds credentials.
func (c *Cache) ensureDir() error {
	if err := os.Mkdir(c.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	return nil
}

func (c *Cache) write(path string, data []byte) error {
	c.dirty = true
	return writeAtomic(path, data)
}

// writeWith is write for content that fill streams (and flushes).
func (c *Cache) writeWith(path string, fill func(*bufio.Writer) error) error {
	c.dirty = true
	return writeAtomicWith(path, fill)
}

// sameBytes reports whether the file at path holds exactly what encode
// writes, comparing as it goes (nothing is held; a difference stops the
// reading, though encode runs to its end).
func sameBytes(path string, encode func(*bufio.Writer) error) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	cmp := &comparer{r: getReader(f), same: true}
	defer putReader(cmp.r)
	w := getWriter(cmp)
	defer putWriter(w)
	if err := encode(w); err != nil || !cmp.same {
		return false
	}
	_, err = cmp.r.ReadByte()
	return err == io.EOF // and not longer
}

// comparer is an io.Writer that checks what is written against r, in
// place in r's buffer.
type comparer struct {
	r    *bufio.Reader
	same bool
}

func (c *comparer) Write(p []byte) (int, error) {
	for rest := p; c.same && len(rest) > 0; {
		n := min(len(rest), c.r.Size())
		b, err := c.r.Peek(n)
		if err != nil || !bytes.Equal(b, rest[:n]) {
			c.same = false
			break
		}
		c.r.Discard(n)
		rest = rest[n:]
	}
	return len(p), nil
}

// sameFiles reports whether files a and b hold the same bytes, reading
// both a block at a time; b missing is not the same (no error).
func sameFiles(a, b string) (bool, error) {
	fb, err := os.Open(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fb.Close()
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	sa, err := fa.Stat()
	if err != nil {
		return false, err
	}
	sb, err := fb.Stat()
	if err != nil {
		return false, err
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	pa, pb := blocks.Get().(*[]byte), blocks.Get().(*[]byte)
	defer blocks.Put(pa)
	defer blocks.Put(pb)
	ba, bb := *pa, *pb
	for {
		na, errA := io.ReadFull(fa, ba)
		nb, errB := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == io.EOF || errB == io.ErrUnexpectedEOF, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
	}
}

// Staged writes are hidden and named after the program, so that the next
// pass can tell its leftovers (a pass killed between the write and the
// rename) from anything else, and remove them: the reference's "tmpXXX"
// files stayed in the cache directory for ever.
const (
	stagePrefix  = ".os-collect-config-"
	stagePattern = stagePrefix + "*.tmp"
)

var staged = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\.os-collect-config-[0-9]+\.tmp$`) })

// RemoveLeftovers removes the staged files that passes killed part way
// left in the cache directory, and returns their paths. Only the holder
// of the pass lock may call it: no other pass is writing.
func (c *Cache) RemoveLeftovers() []string {
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !staged().MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(c.Dir, e.Name())
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// writeAtomic writes data to a 0600 temporary file beside path and
// renames it over path: readers see the old or the new file, never a part.
// Durability is Sync's, once per pass.
func writeAtomic(path string, data []byte) error {
	return writeAtomicWith(path, func(w *bufio.Writer) error {
		w.Write(data)
		return w.Flush()
	})
}

// writeAtomicWith is writeAtomic for content that fill streams into the
// temporary file (and flushes).
func writeAtomicWith(path string, fill func(*bufio.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), stagePattern)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	w := getWriter(tmp)
	defer putWriter(w)
	if err := fill(w); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Sync makes everything written to the cache so far durable: one syncfs
// of its filesystem, then the directory itself (cheaper than a sync per
// file, which costs more than the rest of a pass).
func (c *Cache) Sync() error {
	if !c.dirty {
		return nil
	}
	c.dirty = false
	d, err := os.Open(c.Dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return err
	}
	return d.Sync()
}

// copyTree copies a directory of regular files and subdirectories, with
// their modes, as Python's shutil.copytree does for the cache.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // the cache holds nothing else
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(perm); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
