package pyutf8

import (
	"strings"
	"unicode/utf8"
)

// DecodeReplace is Python's bytes.decode('utf-8', 'replace'): each maximal
// invalid subpart of a sequence becomes one U+FFFD (Go's own conversion
// replaces byte by byte, which differs on truncated sequences).
func DecodeReplace(b []byte) string {
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
