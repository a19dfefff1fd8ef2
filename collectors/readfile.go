package collectors

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadFile reads a file of a local source (a local directory's file, a
// heat_local file). Only a regular file is read, and opening never
// blocks: a FIFO dropped among the files would wait for a writer
// forever, stopping every pass and SIGTERM with it, and a link to
// /dev/zero would never end.
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w", path, kind(st.Mode()), ErrNotRegular)
	}
	return io.ReadAll(f)
}

// ErrNotRegular is a source file that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}
