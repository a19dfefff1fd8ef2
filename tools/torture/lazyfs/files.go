package lazyfs

import (
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The operations on files: making them, their handles, their bytes and
// their fsync.

func resize(b []byte, size int) []byte {
	if size <= len(b) {
		return b[:size:size] // a later append must not reuse what a durable copy may share
	}
	return append(b, make([]byte, size-len(b))...)
}

// create makes a new inode named name in dir; its durable self is the
// one it was created as, which matters once its name is durable.
func (f *fsys) create(parent uint64, name string, n *inode, h *fuse.InHeader, out *fuse.EntryOut) (uint64, fuse.Status) {
	d, st := f.dir(parent)
	if !st.Ok() {
		return 0, st
	}
	if _, ok := d.children[name]; ok {
		return 0, fuse.Status(syscall.EEXIST)
	}
	now := time.Now()
	ino := f.next
	f.next++
	n.uid, n.gid = h.Uid, h.Gid
	if d.mode&syscall.S_ISGID != 0 {
		n.gid = d.gid
		if n.isDir() {
			n.mode |= syscall.S_ISGID
		}
	}
	n.atime, n.mtime, n.ctime, n.generation = now, now, now, ino
	n.nlink = 1
	if n.isDir() {
		n.nlink = 2
		d.nlink++
		n.children = map[string]uint64{}
	}
	d.children[name] = ino
	d.mtime, d.ctime = now, now
	f.live[ino] = n
	f.durable[ino] = n.clone()
	f.fillEntry(ino, n, out)
	return ino, fuse.OK
}

// lockedCreate is create under the lock.
func (f *fsys) lockedCreate(parent uint64, name string, n *inode, h *fuse.InHeader, out *fuse.EntryOut) fuse.Status {
	if st := f.lock(); !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	_, st := f.create(parent, name, n, h, out)
	return st
}

func (f *fsys) Mknod(_ <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	return f.lockedCreate(in.NodeId, name, &inode{mode: in.Mode, rdev: in.Rdev}, &in.InHeader, out)
}

func (f *fsys) Mkdir(_ <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return f.lockedCreate(in.NodeId, name, &inode{mode: syscall.S_IFDIR | in.Mode&0o7777}, &in.InHeader, out)
}

func (f *fsys) Symlink(_ <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return f.lockedCreate(h.NodeId, name, &inode{mode: syscall.S_IFLNK | 0o777, target: target}, h, out)
}

func (f *fsys) Readlink(_ <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if st := f.lock(); !st.Ok() {
		return nil, st
	}
	defer f.mu.Unlock()
	n, ok := f.live[h.NodeId]
	if !ok || n.mode&syscall.S_IFMT != syscall.S_IFLNK {
		return nil, fuse.EINVAL
	}
	return []byte(n.target), fuse.OK
}

func (f *fsys) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if st := f.lock(); !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	ino, st := f.create(in.NodeId, name, &inode{mode: syscall.S_IFREG | in.Mode&0o7777}, &in.InHeader, &out.EntryOut)
	if !st.Ok() {
		return st
	}
	out.OpenOut.Fh = f.open(ino, in.Flags)
	return fuse.OK
}

func (f *fsys) open(ino uint64, flags uint32) uint64 {
	f.nextFh++
	f.handles[f.nextFh] = &handle{ino: ino, flags: flags}
	f.opens[ino]++
	return f.nextFh
}

// maybeDrop forgets ino once it has neither a name nor an open handle.
func (f *fsys) maybeDrop(ino uint64) {
	n, ok := f.live[ino]
	if ok && n.nlink == 0 && f.opens[ino] == 0 {
		delete(f.live, ino)
		delete(f.opens, ino)
	}
}

func (f *fsys) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	if n.isDir() {
		return fuse.EISDIR
	}
	if in.Flags&syscall.O_TRUNC != 0 && n.isReg() {
		n.data = n.data[:0:0]
		n.mtime, n.ctime = time.Now(), time.Now()
	}
	out.Fh = f.open(in.NodeId, in.Flags)
	return fuse.OK
}

func (f *fsys) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return nil, st
	}
	defer f.mu.Unlock()
	if in.Offset >= uint64(len(n.data)) {
		return fuse.ReadResultData(nil), fuse.OK
	}
	end := min(uint64(len(n.data)), in.Offset+uint64(len(buf)))
	return fuse.ReadResultData(append([]byte(nil), n.data[in.Offset:end]...)), fuse.OK
}

func (f *fsys) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return 0, st
	}
	defer f.mu.Unlock()
	end := int(in.Offset) + len(data)
	if end > len(n.data) {
		n.data = resize(n.data, end)
	}
	copy(n.data[in.Offset:], data)
	n.mtime, n.ctime = time.Now(), time.Now()
	if h, ok := f.handles[in.Fh]; ok && h.flags&(syscall.O_SYNC|syscall.O_DSYNC) != 0 {
		f.stats.SyncWrites++
		f.durable[in.NodeId] = n.clone()
	}
	return uint32(len(data)), fuse.OK
}

func (f *fsys) Flush(<-chan struct{}, *fuse.FlushIn) fuse.Status { return fuse.OK }

func (f *fsys) Release(_ <-chan struct{}, in *fuse.ReleaseIn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.release(in.Fh)
}

func (f *fsys) ReleaseDir(in *fuse.ReleaseIn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.release(in.Fh)
}

func (f *fsys) release(fh uint64) {
	h, ok := f.handles[fh]
	if !ok {
		return
	}
	delete(f.handles, fh)
	f.opens[h.ino]--
	f.maybeDrop(h.ino)
}

func (f *fsys) Fsync(_ <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	if in.FsyncFlags&1 != 0 { // FUSE_FSYNC_FDATASYNC
		f.stats.Fdatasync++
		d := f.durable[in.NodeId]
		if d == nil {
			d = n.clone()
			f.durable[in.NodeId] = d
		}
		d.data = append([]byte(nil), n.data...)
		return fuse.OK
	}
	f.stats.Fsync++
	f.durable[in.NodeId] = n.clone()
	return fuse.OK
}
