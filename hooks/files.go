package hooks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// DirMode is the mode of the directories a hook creates: they hold
// deployments' scripts and data, which carry credentials.
const DirMode = 0o700

// PrepareDir creates path (mode 0700) unless it is a directory already,
// as the reference's prepare_dir: missing parents get the default mode,
// an existing directory keeps its own.
func PrepareDir(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil
	}
	if parent := filepath.Dir(path); parent != path {
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return err
		}
	}
	err := os.Mkdir(path, DirMode)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil // made meanwhile
		}
	}
	return err
}

// WriteFile writes data to path, truncating it, and leaves it with mode
// whatever mode an older file had: a script or a variables file from an
// earlier run of the same id must neither keep stale bytes past the new
// end nor looser permissions.
func WriteFile(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
