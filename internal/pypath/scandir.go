package pypath

import (
	"io/fs"
	"sort"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DirEntry is one entry of a directory, as os.scandir gives it: its name
// and its type (not following a symbolic link).
type DirEntry struct {
	Name string
	Type fs.FileMode // fs.ModeDir, fs.ModeSymlink, ... or 0 for a regular file
}

// ScanDir lists dir sorted by name, without "." and "..". It costs open,
// getdents and close: os.ReadDir adds the runtime poller's fcntl and
// epoll_ctl, and os.walk-like callers list every directory of a tree on
// every run.
func ScanDir(dir string) ([]DirEntry, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var out []DirEntry
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			break
		}
		out = appendDirents(out, dir, buf[:n])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// appendDirents parses linux_dirent64 records: d_ino (8 bytes), d_off
// (8), d_reclen (2), d_type (1), then the name, NUL-terminated.
func appendDirents(out []DirEntry, dir string, b []byte) []DirEntry {
	for len(b) >= 19 {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
		if reclen < 19 || reclen > len(b) {
			break
		}
		typ, name := b[18], b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		b = b[reclen:]
		if s := string(name); s != "." && s != ".." {
			out = append(out, DirEntry{Name: s, Type: direntType(typ, dir, s)})
		}
	}
	return out
}

func direntType(typ byte, dir, name string) fs.FileMode {
	switch typ {
	case unix.DT_REG:
		return 0
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	// DT_UNKNOWN: some filesystems do not say; ask.
	var st unix.Stat_t
	if unix.Lstat(Join(dir, name), &st) != nil {
		return fs.ModeIrregular
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
