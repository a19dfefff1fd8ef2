package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy is what a lock attempt wraps when another open file description
// holds the lock.
var ErrBusy = errors.New("held by another process")

// Lock is an exclusive flock(2) on an open file or directory, held until
// Unlock (which closes the file) or the process ends. flock, unlike fcntl
// locks, belongs to the open file description, so two opens of the same
// path in one process exclude each other too, and the kernel drops it
// when the process dies.
type Lock struct {
	f *os.File
}

// lockPoll is how often WaitLock tries again.
const lockPoll = 100 * time.Millisecond

// TryLock takes the lock on f at once, or returns an error wrapping ErrBusy
// (and unix.EWOULDBLOCK) when another open file description holds it;
// other errors are returned as is. On error f is not closed: the caller
// owns it.
func TryLock(f *os.File) (*Lock, error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return &Lock{f: f}, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return nil, fmt.Errorf("locking %s: %w (%w)", f.Name(), ErrBusy, err)
		default:
			return nil, err
		}
	}
}

// WaitLock takes the lock on f, trying every 100 ms until it gets it or
// ctx ends (then it returns ctx's error, wrapped). It calls waiting, if
// not nil, once: the first time it finds the lock held, so the caller can
// say what it is waiting for. On error f is not closed.
func WaitLock(ctx context.Context, f *os.File, waiting func()) (*Lock, error) {
	var t *time.Timer
	told := false
	for {
		l, err := TryLock(f)
		if !errors.Is(err, ErrBusy) {
			return l, err
		}
		if !told && waiting != nil {
			waiting()
		}
		told = true
		if t == nil {
			t = time.NewTimer(lockPoll)
			defer t.Stop()
		} else {
			t.Reset(lockPoll)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the lock on %s: %w", f.Name(), ctx.Err())
		case <-t.C:
		}
	}
}

// Unlock closes the file, which releases the lock.
func (l *Lock) Unlock() error { return l.f.Close() }

// File is the locked file.
func (l *Lock) File() *os.File { return l.f }
