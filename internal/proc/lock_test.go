package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// openLock opens path as the programs do: a lock file (as os-refresh-config)
// or a directory (as os-collect-config's cache).
func openLock(t *testing.T, path string, dir bool) *os.File {
	t.Helper()
	var f *os.File
	var err error
	if dir {
		f, err = os.Open(path)
	} else {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Not parallel with the tests that start children, as neither is
// TestWaitLock: a child forked meanwhile holds a copy of every descriptor
// until it execs, and with it a lock the test has just released (flock
// belongs to the open file). Natively that lasts microseconds; qemu-user
// (make cross-test) forks without sharing memory and execs much later,
// and the released lock was seen still held.
func TestTryLock(t *testing.T) {
	for _, dir := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "directory"}[dir]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := t.TempDir()
			if !dir {
				path = filepath.Join(path, "lock")
			}
			f1, f2 := openLock(t, path, dir), openLock(t, path, dir)
			l, err := TryLock(f1)
			if err != nil {
				t.Fatal(err)
			}
			if l.File() != f1 {
				t.Error("File() is not the locked file")
			}
			if _, err := TryLock(f2); !errors.Is(err, ErrBusy) {
				t.Fatalf("second TryLock: %v, want ErrBusy", err)
			}
			if _, err := f2.Stat(); err != nil {
				t.Errorf("TryLock closed the busy file: %v", err)
			}
			if err := l.Unlock(); err != nil {
				t.Fatal(err)
			}
			if _, err := f1.Stat(); err == nil {
				t.Error("Unlock did not close the file")
			}
			l2, err := TryLock(f2)
			if err != nil {
				t.Fatalf("TryLock after Unlock: %v", err)
			}
			l2.Unlock()
		})
	}
}

func TestTryLockClosed(t *testing.T) {
	t.Parallel()
	f := openLock(t, filepath.Join(t.TempDir(), "lock"), false)
	f.Close()
	if _, err := TryLock(f); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("TryLock of a closed file: %v", err)
	}
}

// heldLock is a lock file held through one open file, and a second open
// file of it to wait with.
func heldLock(t *testing.T) (held *Lock, other *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lock")
	f1, f2 := openLock(t, path, false), openLock(t, path, false)
	held, err := TryLock(f1)
	if err != nil {
		t.Fatal(err)
	}
	return held, f2
}

// TestWaitLock is not parallel: see TestTryLock.
func TestWaitLock(t *testing.T) {
	held, f2 := heldLock(t)
	var calls atomic.Int32
	waiting := make(chan struct{})
	type result struct {
		l   *Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := WaitLock(context.Background(), f2, func() {
			if calls.Add(1) == 1 {
				close(waiting)
			}
		})
		got <- result{l, err}
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("waiting was not called")
	}
	time.Sleep(250 * time.Millisecond) // a few more polls
	held.Unlock()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.l.File() != f2 {
			t.Error("the lock is not on the file given")
		}
		r.l.Unlock()
	case <-time.After(10 * time.Second):
		t.Fatal("WaitLock did not get the released lock")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("waiting called %d times, want once", n)
	}

	// A free lock: taken at once, waiting not called.
	f3 := openLock(t, held.File().Name(), false)
	l, err := WaitLock(context.Background(), f3, func() { t.Error("waiting called for a free lock") })
	if err != nil {
		t.Fatal(err)
	}
	l.Unlock()
}

func TestWaitLockContext(t *testing.T) {
	t.Parallel()
	held, f2 := heldLock(t)
	defer held.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	begin := time.Now()
	if _, err := WaitLock(ctx, f2, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if _, err := f2.Stat(); err != nil {
		t.Errorf("WaitLock closed the file: %v", err)
	}
}
