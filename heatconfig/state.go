package heatconfig

import (
	"os"
	"path/filepath"
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

// replaceDurably puts data at path (0600) through a staged file renamed
// over it, synced with its directory: a reader sees the old or the new
// bytes, and a power cut keeps one of them.
func replaceDurably(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	staged := f.Name()
	defer os.Remove(staged) // after a successful rename there is none
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
	if err := os.Rename(staged, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
