// Package lazyfs is a FUSE filesystem that loses what a power cut would:
// it keeps two copies of every file and directory, the live one that
// processes read and write, and the durable one that a sync made; a cut
// throws the live copies away and the filesystem comes back from the
// durable ones.
//
// What makes what durable follows POSIX strictly, the least a real disk
// promises:
//   - fsync of a file: its bytes and attributes (fdatasync: its bytes);
//   - fsync of a directory: its entries (names created, renamed in or
//     out, unlinked) and attributes;
//   - syncfs or sync, and a write to a file opened O_SYNC or O_DSYNC:
//     everything (syncfs and sync never reach a FUSE filesystem, so
//     lazyfs sees them through a seccomp filter on the processes it
//     starts: see Start).
//
// A new file or directory is durable as it was created (empty, with its
// creation mode and owner) only once its name is: a directory fsync of
// its parent without an fsync of the file leaves it empty after a cut,
// as ext4 leaves a file written but not synced.
package lazyfs

import (
	"maps"
	"sort"
	"syscall"
	"time"
)

// inode is one file, directory, symlink or special file.
type inode struct {
	mode       uint32 // type and permission bits
	uid, gid   uint32
	rdev       uint32
	nlink      uint32
	data       []byte            // a regular file's bytes
	target     string            // a symlink's target
	children   map[string]uint64 // a directory's entries
	atime      time.Time
	mtime      time.Time
	ctime      time.Time
	generation uint64
}

func (n *inode) isDir() bool { return n.mode&syscall.S_IFMT == syscall.S_IFDIR }
func (n *inode) isReg() bool { return n.mode&syscall.S_IFMT == syscall.S_IFREG }

func (n *inode) clone() *inode {
	c := *n
	c.data = append([]byte(nil), n.data...)
	if n.children != nil {
		c.children = maps.Clone(n.children)
	}
	return &c
}

// world is a whole filesystem: inodes by number; rootIno is the root.
type world map[uint64]*inode

const rootIno = 1

func (w world) clone() world {
	c := make(world, len(w))
	for ino, n := range w {
		c[ino] = n.clone()
	}
	return c
}

// reachable keeps the inodes that a path from the root leads to (what a
// filesystem checker keeps after a crash), with their link counts
// recounted.
func (w world) reachable() world {
	out := world{}
	var walk func(ino uint64)
	walk = func(ino uint64) {
		n, ok := w[ino]
		if !ok {
			return
		}
		if c, seen := out[ino]; seen {
			c.nlink++
			return
		}
		c := n.clone()
		c.nlink = 1
		out[ino] = c
		if !c.isDir() {
			return
		}
		c.nlink = 2
		names := make([]string, 0, len(c.children))
		for name := range c.children {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			child := c.children[name]
			if _, ok := w[child]; !ok {
				delete(c.children, name)
				continue
			}
			if w[child].isDir() {
				if _, seen := out[child]; seen {
					delete(c.children, name) // a second name of a directory: dropped
					continue
				}
				c.nlink++
			}
			walk(child)
		}
	}
	walk(rootIno)
	return out
}

// Image is a durable state: what a filesystem holds after a cut. It is
// never changed once made.
type Image struct{ w world }

// EmptyImage is a filesystem with an empty root directory (mode 0755,
// root's).
func EmptyImage() Image {
	now := time.Now()
	return Image{w: world{rootIno: {
		mode: syscall.S_IFDIR | 0o755, nlink: 2, children: map[string]uint64{},
		atime: now, mtime: now, ctime: now,
	}}}
}

// Files lists the image's regular files and symlinks by path (relative,
// slash-separated) with their bytes (a symlink's: its target), for tests
// that look at what a cut left without mounting it.
func (img Image) Files() map[string][]byte {
	out := map[string][]byte{}
	w := img.w.reachable()
	var walk func(ino uint64, prefix string)
	walk = func(ino uint64, prefix string) {
		for name, child := range w[ino].children {
			n := w[child]
			switch {
			case n.isDir():
				walk(child, prefix+name+"/")
			case n.mode&syscall.S_IFMT == syscall.S_IFLNK:
				out[prefix+name] = []byte(n.target)
			default:
				out[prefix+name] = append([]byte(nil), n.data...)
			}
		}
	}
	walk(rootIno, "")
	return out
}
