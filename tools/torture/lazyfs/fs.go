package lazyfs

import (
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Stats counts the syncs a filesystem saw, to tell what a program relies on.
type Stats struct {
	Fsync, Fdatasync, FsyncDir, SyncAll, SyncWrites int
}

// fsys is the FUSE side: the live world that processes see and the
// durable one that a cut comes back to.
type fsys struct {
	fuse.RawFileSystem // ENOSYS for what is not below

	mu      sync.Mutex
	live    world
	durable world
	next    uint64
	// frozen: the power is off; every request fails and nothing more
	// becomes durable.
	frozen  bool
	opens   map[uint64]int // open handles per inode
	handles map[uint64]*handle
	nextFh  uint64
	stats   Stats
}

type handle struct {
	ino   uint64
	flags uint32
	names []fuse.DirEntry // a directory's, as of its opening
}

// ttl is how long the kernel may cache names and attributes: every change
// goes through this one mount, so its caches cannot go stale.
const ttl = 10 * time.Second

func newFS(img Image) *fsys {
	live := img.w.reachable()
	var next uint64 = rootIno
	for ino := range live {
		next = max(next, ino)
	}
	return &fsys{
		RawFileSystem: fuse.NewDefaultRawFileSystem(),
		live:          live,
		durable:       live.clone(),
		next:          next + 1,
		opens:         map[uint64]int{},
		handles:       map[uint64]*handle{},
	}
}

func (f *fsys) String() string { return "lazyfs" }

// lock takes the filesystem's lock, or fails when the power is off.
func (f *fsys) lock() fuse.Status {
	f.mu.Lock()
	if f.frozen {
		f.mu.Unlock()
		return fuse.EIO
	}
	return fuse.OK
}

// lockInode takes the lock and finds the live inode ino; on failure the
// lock is not held.
func (f *fsys) lockInode(ino uint64) (*inode, fuse.Status) {
	if st := f.lock(); !st.Ok() {
		return nil, st
	}
	n, ok := f.live[ino]
	if !ok {
		f.mu.Unlock()
		return nil, fuse.ENOENT
	}
	return n, fuse.OK
}

// lockDir is lockInode for a directory.
func (f *fsys) lockDir(ino uint64) (*inode, fuse.Status) {
	if st := f.lock(); !st.Ok() {
		return nil, st
	}
	d, st := f.dir(ino)
	if !st.Ok() {
		f.mu.Unlock()
	}
	return d, st
}

// lockHandle is lockInode for an open handle.
func (f *fsys) lockHandle(fh uint64) (*handle, fuse.Status) {
	if st := f.lock(); !st.Ok() {
		return nil, st
	}
	h, ok := f.handles[fh]
	if !ok {
		f.mu.Unlock()
		return nil, fuse.EBADF
	}
	return h, fuse.OK
}

func (f *fsys) syncAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return
	}
	f.stats.SyncAll++
	f.durable = f.live.clone()
}

// freeze cuts the power: it returns the durable state of this instant.
func (f *fsys) freeze() Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
	return Image{w: f.durable}
}

func (f *fsys) image() Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Image{w: f.durable.clone()}
}

func (f *fsys) getStats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func timeParts(t time.Time) (uint64, uint32) { return uint64(t.Unix()), uint32(t.Nanosecond()) }

func (f *fsys) fillAttr(ino uint64, n *inode, a *fuse.Attr) {
	*a = fuse.Attr{Ino: ino, Mode: n.mode, Nlink: n.nlink, Rdev: n.rdev, Blksize: 4096}
	a.Uid, a.Gid = n.uid, n.gid
	switch {
	case n.isReg():
		a.Size = uint64(len(n.data))
	case n.mode&syscall.S_IFMT == syscall.S_IFLNK:
		a.Size = uint64(len(n.target))
	case n.isDir():
		a.Size = 4096
	}
	a.Blocks = (a.Size + 511) / 512
	a.Atime, a.Atimensec = timeParts(n.atime)
	a.Mtime, a.Mtimensec = timeParts(n.mtime)
	a.Ctime, a.Ctimensec = timeParts(n.ctime)
}

func (f *fsys) fillEntry(ino uint64, n *inode, out *fuse.EntryOut) {
	out.NodeId, out.Generation = ino, n.generation
	out.EntryValid, out.AttrValid = uint64(ttl/time.Second), uint64(ttl/time.Second)
	f.fillAttr(ino, n, &out.Attr)
}

func (f *fsys) dir(ino uint64) (*inode, fuse.Status) {
	n, ok := f.live[ino]
	if !ok {
		return nil, fuse.ENOENT
	}
	if !n.isDir() {
		return nil, fuse.ENOTDIR
	}
	return n, fuse.OK
}

func (f *fsys) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	d, st := f.lockDir(h.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	ino, ok := d.children[name]
	if !ok {
		return fuse.ENOENT
	}
	f.fillEntry(ino, f.live[ino], out)
	return fuse.OK
}

func (f *fsys) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	out.AttrValid = uint64(ttl / time.Second)
	f.fillAttr(in.NodeId, n, &out.Attr)
	return fuse.OK
}

func (f *fsys) SetAttr(_ <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	n, st := f.lockInode(in.NodeId)
	if !st.Ok() {
		return st
	}
	defer f.mu.Unlock()
	now := time.Now()
	if in.Valid&fuse.FATTR_MODE != 0 {
		n.mode = n.mode&syscall.S_IFMT | in.Mode&0o7777
	}
	if in.Valid&fuse.FATTR_UID != 0 {
		n.uid = in.Uid
	}
	if in.Valid&fuse.FATTR_GID != 0 {
		n.gid = in.Gid
	}
	if in.Valid&fuse.FATTR_SIZE != 0 {
		if !n.isReg() {
			return fuse.EINVAL
		}
		n.data = resize(n.data, int(in.Size))
		n.mtime = now
	}
	if in.Valid&fuse.FATTR_ATIME != 0 {
		n.atime = time.Unix(int64(in.Atime), int64(in.Atimensec))
	}
	if in.Valid&fuse.FATTR_ATIME_NOW != 0 {
		n.atime = now
	}
	if in.Valid&fuse.FATTR_MTIME != 0 {
		n.mtime = time.Unix(int64(in.Mtime), int64(in.Mtimensec))
	}
	if in.Valid&fuse.FATTR_MTIME_NOW != 0 {
		n.mtime = now
	}
	n.ctime = now
	out.AttrValid = uint64(ttl / time.Second)
	f.fillAttr(in.NodeId, n, &out.Attr)
	return fuse.OK
}
