package hooks

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Decode is Python's bytes.decode('utf-8', 'replace'): each maximal
// invalid subpart of a sequence becomes one U+FFFD (Go's own conversion
// replaces byte by byte, which differs on truncated sequences).
func Decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			sb.WriteByte(b[i])
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += invalidPrefix(b[i:])
	}
	return sb.String()
}

// invalidPrefix is the length of the maximal subpart at the start of b,
// which is not valid UTF-8: the lead byte and the continuation bytes that
// could still have made a valid sequence (Unicode §3.9, as CPython).
func invalidPrefix(b []byte) int {
	lo, hi := byte(0x80), byte(0xbf)
	need := 0
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		need, lo = 2, 0xa0
	case c == 0xed:
		need, hi = 2, 0x9f
	case c >= 0xe1 && c <= 0xef:
		need = 2
	case c == 0xf0:
		need, lo = 3, 0x90
	case c == 0xf4:
		need, hi = 3, 0x8f
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return n
}

// decodeTail decodes the end of a longer stream: the continuation bytes
// of a character cut by the start of the tail are dropped rather than
// shown as U+FFFD.
func decodeTail(b []byte, cut bool) string {
	if cut {
		for k := 0; k < utf8.UTFMax-1 && len(b) > 0 && b[0]&0xc0 == 0x80; k++ {
			b = b[1:]
		}
	}
	return Decode(b)
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
	return universalNewlines(Decode(b)), nil
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
