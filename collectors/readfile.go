package collectors

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadFile reads a file of a local source (a local directory's file, a
// heat_local file). It has no size cap, as in the reference:
// max_metadata_bytes caps what comes from the network, and a node's own
// files (100 MB of hieradata happen) are root's. Only a regular file is read, and opening never blocks: a
// FIFO dropped among the files would wait for a writer forever, stopping
// every pass and SIGTERM with it, and a link to /dev/zero would never
// end. The file is read into one buffer of its size (io.ReadAll would
// grow it by copies, up to twice the file at once).
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
	// One byte more than the size, to see the end without growing: a
	// file that grew since is still read whole, only with a copy.
	buf := make([]byte, 0, st.Size()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ErrNotRegular is a source file that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// MaxBodyOption names the option that caps a source's metadata, in the
// error of a body (or websocket frame) over it: what an operator must
// raise.
const MaxBodyOption = "max_metadata_bytes in [DEFAULT], --max-metadata-bytes"

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
