// Package pyutf8 decodes bytes as Python's bytes.decode('utf-8') does, where
// our text must be the reference's byte for byte: the replacement of
// invalid sequences ('replace') and the wording of UnicodeDecodeError.
package pyutf8

import "fmt"

// DecodeError words the first UTF-8 error in data as Python's
// UnicodeDecodeError does ("'utf-8' codec can't decode byte 0xe9 in
// position 3: invalid continuation byte"); ok is false for valid UTF-8.
func DecodeError(data []byte) (msg string, ok bool) {
	for i := 0; i < len(data); {
		c := data[i]
		if c < 0x80 {
			i++
			continue
		}
		var need int
		lo, hi := byte(0x80), byte(0xbf) // range of the second byte
		switch {
		case c >= 0xc2 && c <= 0xdf:
			need = 1
		case c >= 0xe0 && c <= 0xef:
			need = 2
			if c == 0xe0 {
				lo = 0xa0
			} else if c == 0xed {
				hi = 0x9f
			}
		case c >= 0xf0 && c <= 0xf4:
			need = 3
			if c == 0xf0 {
				lo = 0x90
			} else if c == 0xf4 {
				hi = 0x8f
			}
		default:
			return decodeMsg(data, i, i+1, "invalid start byte"), true
		}
		for k := 1; k <= need; k++ {
			if i+k >= len(data) {
				return decodeMsg(data, i, len(data), "unexpected end of data"), true
			}
			b := data[i+k]
			if (k == 1 && (b < lo || b > hi)) || (k > 1 && (b < 0x80 || b > 0xbf)) {
				return decodeMsg(data, i, i+k, "invalid continuation byte"), true
			}
		}
		i += need + 1
	}
	return "", false
}

func decodeMsg(data []byte, start, end int, reason string) string {
	if end-start == 1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", data[start], start, reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", start, end-1, reason)
}
