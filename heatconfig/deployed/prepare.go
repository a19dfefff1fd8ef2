package deployed

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// errCrossDevice is rename(2)'s answer across filesystems.
var errCrossDevice error = syscall.EXDEV

// Prepare makes the directory, moving the legacy one (on tmpfs before
// 2016) into its place if it exists and d does not.
func (d Dir) Prepare(legacy Dir, log *slog.Logger) error {
	if fi, err := os.Stat(string(d)); err == nil && fi.IsDir() {
		return nil
	}
	if d != legacy {
		if fi, err := os.Stat(string(legacy)); err == nil && fi.IsDir() {
			log.Debug(fmt.Sprintf("Migrating deployed state from %s to %s", legacy, d))
			return move(string(legacy), string(d))
		}
	}
	if err := mkdirAllDurable(string(d), 0o700); err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	return nil
}

// move renames old to new, or copies its files across filesystems (/run
// is a tmpfs) and removes it, as shutil.move does.
func move(old, new string) error {
	if err := mkdirAllDurable(filepath.Dir(new), 0o755); err != nil {
		return err
	}
	err := os.Rename(old, new)
	if err == nil {
		// Both names, or a cut brings the old place back, or neither.
		if err := syncDir(filepath.Dir(new)); err != nil {
			return err
		}
		return syncDir(filepath.Dir(old))
	}
	if !errors.Is(err, errCrossDevice) {
		return err
	}
	if err := copyFlat(old, new); err != nil {
		return fmt.Errorf("migrating %s to %s: %w", old, new, err)
	}
	return os.RemoveAll(old)
}

// copyFlat copies the regular files of a flat directory, private (they
// hold credentials), each synced before the old copy goes.
func copyFlat(old, new string) error {
	entries, err := os.ReadDir(old)
	if err != nil {
		return err
	}
	if err := mkdirAllDurable(new, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(old, e.Name()))
		if err != nil {
			return err
		}
		if err := createSynced(filepath.Join(new, e.Name()), data); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
