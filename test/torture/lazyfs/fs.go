package lazyfs

import (
	"sort"
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
