// Package pyos words operating-system errors as Python's OSError does, for
// messages that must read as the reference's, decodes bytes as Python's
// bytes.decode does, and tells white space as Python's str does.
package pyos

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unicode"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// ErrorString words err about path as str(OSError) does:
// "[Errno 21] Is a directory: 'path'". Errors that carry no errno keep
// their Go wording.
func ErrorString(err error, path string) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error() // strerror(3), with a lower-case first letter
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return fmt.Sprintf("[Errno %d] %s: %s", int(errno), msg, pyjson.ReprString(path))
}

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

// LoadsJSON is Python's json.loads of bytes: a document that is not UTF-8
// or not JSON is an error worded as Python words it.
func LoadsJSON(data []byte) (pyjson.Value, error) {
	return loadsJSON(data, pyjson.Loads)
}

// LoadsJSONOwned is LoadsJSON for a caller that hands data over (see
// pyjson.LoadsOwned): data must never be modified afterwards.
func LoadsJSONOwned(data []byte) (pyjson.Value, error) {
	return loadsJSON(data, pyjson.LoadsOwned)
}

func loadsJSON(data []byte, loads func([]byte) (pyjson.Value, error)) (pyjson.Value, error) {
	if msg, bad := DecodeError(data); bad {
		return nil, errors.New(msg)
	}
	v, err := loads(data)
	if err != nil {
		return nil, errors.New(pyjson.PythonError(err))
	}
	return v, nil
}

// IsSpace is Python's str.isspace for one character (and \s in its
// regular expressions): Unicode white space and the separators U+001C to
// U+001F, which Go's unicode.IsSpace leaves out.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}
