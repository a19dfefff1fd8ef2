package heatconfig

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tripleo-go/agent/internal/durable"
)

// writeNew creates path (0600: deployments carry credentials) with data,
// failing with fs.ErrExist if it is there: a second heat-config run at
// the same time (an operator's, by hand) must not run a deployment the
// first one has claimed. The file appears whole (staged, synced, then
// linked: test/torture found an empty state file after a kill between
// an exclusive create and its write), and the directory is synced, so a
// deployment whose hook started is still known as deployed after a crash
// or a power cut.
func writeNew(path string, data []byte) error {
	if err := durable.CreateFile(path, data); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeDebug writes a file kept for the operator (the signal data, which
// a run cut short reads back). The reference does not truncate it, which
// leaves old bytes past the end of a shorter new text after a forced
// re-run; we replace it atomically, synced: the state directory's next
// sync makes its name durable, and the bytes must be there by then, not
// an empty file after a power cut.
func writeDebug(path string, data []byte) error { return durable.WriteFile(path, data) }

// replaceDurably puts data at path as writeDebug does, and syncs the
// directory: a reader sees the old or the new bytes, and a power cut
// keeps one of them.
func replaceDurably(path string, data []byte) error {
	if err := writeDebug(path, data); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// removeLeftovers removes the files that writeNew, writeDebug and
// agentstate.Write staged in the state directory (state files, in-flight
// markers, signal data, records) for runs that were killed between the
// write and the link or rename: no
// later run would otherwise touch them (their deployment is done).
func removeLeftovers(dir string, log *slog.Logger) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		target, ok := durable.StagedFor(e.Name())
		if !ok || !(strings.HasSuffix(target, ".json") || strings.HasSuffix(target, ".inflight")) || !e.Type().IsRegular() {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			log.Info("Removed " + filepath.Join(dir, e.Name()) + ", left by a run that did not finish")
		}
	}
}

// syncDir makes a directory's entries durable; a variable so that tests
// can see which directories are synced.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// mkdirAllDurable is os.MkdirAll whose new directories survive a power
// cut: each one's name is made durable in its parent. Without it the
// state directory made by a node's first run, with every state file
// synced inside it, could vanish whole in a cut, and every deployment run
// again.
func mkdirAllDurable(dir string, perm os.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllDurable(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return syncDir(parent)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
