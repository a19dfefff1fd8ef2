// Package durable replaces files so that a kill or a power cut leaves
// the old bytes or the new, never a part: the new bytes are staged
// beside the file, synced, then renamed over it. The staged name tells
// which file it was for, so that what a killed writer left can be found
// and removed.
package durable

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile puts data at path, private to root (0600), replacing what
// was there in one rename. The bytes are synced before the rename, so
// once the directory is synced (the caller's choice: one sync may cover
// many files) a power cut keeps the old file or the new one, not an
// empty one.
func WriteFile(path string, data []byte) error {
	tmp, err := stage(path, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op after the rename
	return os.Rename(tmp, path)
}

// CreateFile puts data at path (0600) only if nothing is there, failing
// with an error that is fs.ErrExist otherwise, and never shows a part:
// the bytes are staged and synced, then linked to path, which appears
// whole or not at all. The caller syncs the directory to make the name
// durable.
func CreateFile(path string, data []byte) error {
	return CreateFileFrom(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CreateFileFrom is CreateFile for content that fill writes, never held
// whole here.
func CreateFileFrom(path string, fill func(io.Writer) error) error {
	tmp, err := stageFrom(path, fill, nil)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, path)
}

// stage writes data to a new file beside path, named as StagedFor
// reads, synced; it returns the file's name.
func stage(path string, data []byte) (string, error) {
	return stageFrom(path, writeAll(data), nil)
}

func writeAll(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// stageFrom is stage for content that fill writes; attrs, when not nil,
// sets the staged file's owner and mode before the sync, so that they
// are durable with the bytes.
func stageFrom(path string, fill func(io.Writer) error, attrs func(*os.File) error) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".") // 0600
	if err != nil {
		return "", err
	}
	if err := fill(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if attrs != nil {
		if err := attrs(tmp); err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			return "", err
		}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// StagedFor tells whether name (a base name) is one WriteFile stages,
// and for which file: ".<target>.<digits>".
func StagedFor(name string) (target string, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 || strings.Trim(rest[i+1:], "0123456789") != "" {
		return "", false
	}
	return rest[:i], true
}
