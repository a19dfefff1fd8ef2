package heatconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// writeNew creates path (0600: deployments carry credentials) with data,
// failing with fs.ErrExist if it is there: a second heat-config run at
// the same time (an operator's, by hand) must not run a deployment the
// first one has claimed. The file and its directory are synced, so a
// deployment whose hook started is still known as deployed after a crash
// or a power cut.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeDebug writes a file kept for the operator (the signal data). The
// reference does not truncate it, which leaves old bytes past the end of
// a shorter new text after a forced re-run; we do.
func writeDebug(path string, data []byte) error {
	return os.WriteFile(path, data, 0o600)
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
