// Package pystr tells characters apart as Python's str methods do, where
// Go's unicode package draws the line elsewhere.
package pystr

import "unicode"

// IsSpace is Python's str.isspace for one character (and \s in its
// regular expressions): Unicode white space and the separators U+001C to
// U+001F, which Go's unicode.IsSpace leaves out.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}
