package lazyfs

import (
	"sort"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The operations on directories and names: fsync of a directory,
// removal, rename, hard links, listing.

func (f *fsys) FsyncDir(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	f.stats.FsyncDir++
	f.durable[in.NodeId] = n.clone()
	return fuse.OK
}

func (f *fsys) Unlink(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return f.remove(h, name, false)
}

func (f *fsys) Rmdir(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return f.remove(h, name, true)
}

func (f *fsys) remove(h *fuse.InHeader, name string, wantDir bool) fuse.Status {
	d, st := f.lockDir(h.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	ino, ok := d.children[name]
	if !ok {
		return fuse.ENOENT
	}
	n := f.live[ino]
	switch {
	case wantDir && !n.isDir():
		return fuse.ENOTDIR
	case !wantDir && n.isDir():
		return fuse.Status(syscall.EISDIR)
	case wantDir && len(n.children) > 0:
		return fuse.Status(syscall.ENOTEMPTY)
	}
	f.unlinkEntry(d, name)
	return fuse.OK
}

// unlinkEntry removes d's entry name and the link it was.
func (f *fsys) unlinkEntry(d *inode, name string) {
	ino := d.children[name]
	n := f.live[ino]
	delete(d.children, name)
	now := time.Now()
	d.mtime, d.ctime, n.ctime = now, now, now
	if n.isDir() {
		d.nlink--
		n.nlink = 0
	} else {
		n.nlink--
	}
	f.maybeDrop(ino)
}

func (f *fsys) Rename(_ <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	if st := f.lock(); !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	const noReplace = 1 // RENAME_NOREPLACE
	if in.Flags&^noReplace != 0 {
		return fuse.Status(syscall.EINVAL) // RENAME_EXCHANGE, RENAME_WHITEOUT
	}
	src, st := f.dir(in.NodeId)
	if !st.Ok() {
		return st
	}
	dst, st := f.dir(in.Newdir)
	if !st.Ok() {
		return st
	}
	ino, ok := src.children[oldName]
	if !ok {
		return fuse.ENOENT
	}
	n := f.live[ino]
	if old, ok := dst.children[newName]; ok {
		if in.Flags&noReplace != 0 {
			return fuse.Status(syscall.EEXIST)
		}
		if old == ino {
			return fuse.OK // two names of one file: nothing happens
		}
		o := f.live[old]
		switch {
		case o.isDir() && !n.isDir():
			return fuse.Status(syscall.EISDIR)
		case !o.isDir() && n.isDir():
			return fuse.ENOTDIR
		case o.isDir() && len(o.children) > 0:
			return fuse.Status(syscall.ENOTEMPTY)
		}
		f.unlinkEntry(dst, newName)
	}
	delete(src.children, oldName)
	dst.children[newName] = ino
	if n.isDir() && in.NodeId != in.Newdir {
		src.nlink--
		dst.nlink++
	}
	now := time.Now()
	src.mtime, src.ctime, dst.mtime, dst.ctime, n.ctime = now, now, now, now, now
	return fuse.OK
}

func (f *fsys) Link(_ <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	d, st := f.lockDir(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	n, ok := f.live[in.Oldnodeid]
	if !ok {
		return fuse.ENOENT
	}
	if n.isDir() {
		return fuse.EPERM
	}
	if _, ok := d.children[name]; ok {
		return fuse.Status(syscall.EEXIST)
	}
	d.children[name] = in.Oldnodeid
	n.nlink++
	n.ctime = time.Now()
	f.fillEntry(in.Oldnodeid, n, out)
	return fuse.OK
}

func (f *fsys) Access(<-chan struct{}, *fuse.AccessIn) fuse.Status { return fuse.OK }

func (f *fsys) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	d, st := f.lockDir(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	names := make([]string, 0, len(d.children))
	for name := range d.children {
		names = append(names, name)
	}
	sort.Strings(names)
	entries := []fuse.DirEntry{{Name: ".", Ino: in.NodeId, Mode: syscall.S_IFDIR}, {Name: "..", Ino: rootIno, Mode: syscall.S_IFDIR}}
	for _, name := range names {
		ino := d.children[name]
		entries = append(entries, fuse.DirEntry{Name: name, Ino: ino, Mode: f.live[ino].mode})
	}
	for i := range entries {
		entries[i].Off = uint64(i + 1)
	}
	out.Fh = f.open(in.NodeId, in.Flags)
	f.handles[out.Fh].names = entries
	return fuse.OK
}

func (f *fsys) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	h, st := f.lockHandle(in.Fh)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	for _, e := range h.names[min(int(in.Offset), len(h.names)):] {
		if !out.AddDirEntry(e) {
			break
		}
	}
	return fuse.OK
}

func (f *fsys) ReadDirPlus(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	h, st := f.lockHandle(in.Fh)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	for _, e := range h.names[min(int(in.Offset), len(h.names)):] {
		entry := out.AddDirLookupEntry(e)
		if entry == nil {
			break
		}
		if e.Name == "." || e.Name == ".." {
			continue // no lookup count for these
		}
		if n, ok := f.live[e.Ino]; ok {
			f.fillEntry(e.Ino, n, entry)
		}
	}
	return fuse.OK
}

func (f *fsys) StatFs(_ <-chan struct{}, _ *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	*out = fuse.StatfsOut{Blocks: 1 << 24, Bfree: 1 << 23, Bavail: 1 << 23, Files: 1 << 20, Ffree: 1 << 19, Bsize: 4096, Frsize: 4096, NameLen: 255}
	return fuse.OK
}
