package status

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/secret"
)

// writeBundle writes the members, redacted, as a tar.gz under top/, to
// out: staged beside it and renamed, private (0600).
func writeBundle(out, top string, now time.Time, ms []member, red *secret.Redactor) error {
	if err := checkOutput(out); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".")
	if err != nil {
		return dirError(out, err)
	}
	defer os.Remove(f.Name())
	// The format holds whole seconds, and archive/tar rounds to the
	// nearest: cut instead, or the members are dated up to half a second
	// after the bundle was made, which GNU tar warns of for each.
	mtime := now.Truncate(time.Second)
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, m := range ms {
		data := []byte(red.Redact(secret.RedactText(string(m.data))))
		hdr := &tar.Header{Name: top + "/" + m.name, Mode: 0o600, Size: int64(len(data)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			f.Close()
			return writeError(out, err)
		}
		if _, err := tw.Write(data); err != nil {
			f.Close()
			return writeError(out, err)
		}
	}
	err = tw.Close()
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), out)
	}
	if err != nil {
		return writeError(out, err)
	}
	return nil
}

// checkOutput refuses an output path the bundle cannot be renamed to,
// before the minutes the journal may take.
func checkOutput(out string) error {
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", out)
	}
	fi, err := os.Stat(filepath.Dir(out))
	if err != nil {
		return dirError(out, err)
	}
	if !fi.IsDir() {
		return dirError(out, syscall.ENOTDIR)
	}
	return nil
}

// dirError says why the bundle could not be staged in out's directory,
// naming the directory: the staged file's name is ours, not the
// operator's.
func dirError(out string, err error) error {
	dir := filepath.Dir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: no such directory %s", out, dir)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cannot write %s: %s is not a directory", out, dir)
	}
	return fmt.Errorf("cannot write %s: %s: %w", out, dir, bareError(err))
}

// writeError is a failed write or rename of the bundle, without the
// staged file's name.
func writeError(out string, err error) error {
	return fmt.Errorf("cannot write %s: %w", out, bareError(err))
}

// bareError is err without the path an *os.PathError or *os.LinkError
// adds (the staged file's).
func bareError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
