package jsondoc

import "strings"

// KindOf names a value's JSON type for a message that must not quote the
// value ("hiera is a string, not an object"): "an object", "a list", "a
// string", "a number", "a boolean" or "null". A value still held as its
// bytes (Raw) is named by its first byte, without decoding it.
func KindOf(v Value) string {
	switch v := v.(type) {
	case *Object:
		return "an object"
	case []Value:
		return "a list"
	case string:
		return "a string"
	case Number:
		return "a number"
	case bool:
		return "a boolean"
	case *Raw:
		switch s := strings.TrimLeft(v.src, " \t\r\n"); {
		case strings.HasPrefix(s, "{"):
			return "an object"
		case strings.HasPrefix(s, "["):
			return "a list"
		case strings.HasPrefix(s, `"`):
			return "a string"
		case strings.HasPrefix(s, "t"), strings.HasPrefix(s, "f"):
			return "a boolean"
		case strings.HasPrefix(s, "n"), s == "":
			return "null"
		}
		return "a number"
	}
	return "null"
}
