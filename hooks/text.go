package hooks

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/pyutf8"
)

// decodeTail decodes the end of a longer stream: the continuation bytes
// of a character cut by the start of the tail are dropped rather than
// shown as U+FFFD.
func decodeTail(b []byte, cut bool) string {
	if cut {
		for k := 0; k < utf8.UTFMax-1 && len(b) > 0 && b[0]&0xc0 == 0x80; k++ {
			b = b[1:]
		}
	}
	return pyutf8.DecodeReplace(b)
}

// universalNewlines is what Python's text-mode read() makes of line ends:
// "\r\n" and a lone "\r" both read as "\n".
func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// ReadText reads a file as Python's open(path).read() does (UTF-8,
// universal newlines), but undecodable bytes become U+FFFD instead of
// raising.
func ReadText(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return universalNewlines(pyutf8.DecodeReplace(b)), nil
}

// ReadTail is ReadText of at most the last limit bytes of a file (a
// tool's log, which may be huge), with the number of bytes left out.
func ReadTail(path string, limit int64) (text string, dropped int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", 0, err
	}
	dropped = max(size-limit, 0)
	b := make([]byte, size-dropped)
	n, err := f.ReadAt(b, dropped)
	if err != nil && err != io.EOF {
		return "", 0, err
	}
	b = b[:n]
	return universalNewlines(decodeTail(b, dropped > 0)), dropped, nil
}
