package lazyfs

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Mount is a lazyfs mounted on a directory.
type Mount struct {
	Dir string

	mu  sync.Mutex
	fs  *fsys
	srv *fuse.Server
}

// Available says why lazyfs cannot be mounted here, or nil: it needs
// /dev/fuse and root (it mounts without fusermount).
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("lazyfs mounts FUSE directly: it needs root")
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("lazyfs needs FUSE: %w", err)
	}
	f.Close()
	return nil
}

// New mounts a lazyfs holding img on dir (which must exist).
func New(dir string, img Image) (*Mount, error) {
	m := &Mount{Dir: dir}
	if err := m.mount(img); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Mount) mount(img Image) error {
	fs := newFS(img)
	srv, err := fuse.NewServer(fs, m.Dir, &fuse.MountOptions{
		DirectMountStrict: true,
		FsName:            "lazyfs",
		Name:              "lazyfs",
		DisableXAttrs:     true,
		MaxBackground:     64,
	})
	if err != nil {
		return fmt.Errorf("mounting lazyfs on %s: %w", m.Dir, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		srv.Unmount()
		return fmt.Errorf("mounting lazyfs on %s: %w", m.Dir, err)
	}
	m.mu.Lock()
	m.fs, m.srv = fs, srv
	m.mu.Unlock()
	return nil
}

func (m *Mount) current() *fsys {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fs
}

// Sync makes everything durable, as syncfs does.
func (m *Mount) Sync() { m.current().syncAll() }

// Image is the durable state as of now (what a cut now would leave).
func (m *Mount) Image() Image { return m.current().image() }

// Stats counts the syncs seen since the last (re)mount.
func (m *Mount) Stats() Stats { return m.current().getStats() }

// Freeze cuts the power: from now on every request fails and nothing
// more becomes durable. It returns what the disk holds. Kill the
// processes that use the mount first (a power cut stops them at once),
// then freeze, then Restart once they are gone.
func (m *Mount) Freeze() Image { return m.current().freeze() }

// Restart unmounts the filesystem and mounts img in its place: the
// machine comes back up. Nothing may still use the mount.
func (m *Mount) Restart(img Image) error {
	if err := m.unmount(); err != nil {
		return err
	}
	return m.mount(img)
}

// Cut is Freeze then Restart from what was durable, for a mount that no
// process uses.
func (m *Mount) Cut() error { return m.Restart(m.Freeze()) }

// Close unmounts the filesystem.
func (m *Mount) Close() error { return m.unmount() }

func (m *Mount) unmount() error {
	m.mu.Lock()
	srv := m.srv
	m.srv = nil
	m.mu.Unlock()
	if srv == nil {
		return nil
	}
	var err error
	for try := 0; try < 50; try++ {
		// EBUSY while the kernel still drops the last references of
		// processes just killed.
		if err = unix.Unmount(m.Dir, 0); err == nil || errors.Is(err, unix.EINVAL) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil && !errors.Is(err, unix.EINVAL) {
		unix.Unmount(m.Dir, unix.MNT_DETACH)
		return fmt.Errorf("unmounting lazyfs from %s: %w", m.Dir, err)
	}
	srv.Wait()
	return nil
}
