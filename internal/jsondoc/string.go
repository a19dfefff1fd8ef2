package jsondoc

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// str reads a string, the decoder at its opening quote, with its escapes
// read as Python's json reads them.
func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.errorf("invalid control character in string")
		}
		d.pos++
	}
	// Escapes only shrink: the text up to the closing quote bounds the
	// decoded string, so buf never grows, and becomes the string as it
	// is (a 100 MB escaped value costs 100 MB, not three times that).
	end := d.pos
	for end < len(d.data) && d.data[end] != '"' {
		if d.data[end] == '\\' {
			end++
		}
		end++
	}
	buf := make([]byte, d.pos-start, min(end, len(d.data))-start)
	copy(buf, d.data[start:d.pos])
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
		case c < 0x20:
			return "", d.errorf("invalid control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		d.pos++ // backslash
		if d.pos >= len(d.data) {
			break
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			// Python's scanner wants a character after the four digits
			// (the closing quote, at least): without one it words the
			// error as a bad escape, not as an unterminated string.
			uAt := d.pos - 1
			r, ok := d.hex4()
			if !ok || d.pos >= len(d.data) {
				return "", d.errorAt(uAt, "invalid \\uXXXX escape")
			}
			if utf16.IsSurrogate(r) && len(d.data)-d.pos > 6 && d.hasPrefix(`\u`) {
				save := d.pos
				d.pos += 2
				if r2, ok := d.hex4(); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
				} else {
					d.pos = save
				}
			}
			// A lone surrogate cannot be UTF-8; it becomes U+FFFD.
			buf = utf8.AppendRune(buf, r)
		default:
			d.pos--
			return "", d.errorAt(d.pos-1, "invalid \\escape")
		}
	}
	return "", d.errorAt(start-1, "unterminated string")
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.data)-d.pos < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d.data[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.pos += 4
	return rune(n), true
}
