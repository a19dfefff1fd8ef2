package nodeconfig

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// KeyText is a metadata key, or a part of one, as a message shows it:
// as it is, but quoted (Go's strconv.Quote) when it is empty, holds
// white space, what a terminal does not print or bytes that are not
// UTF-8, so that the message stays one line and the key reads back.
func KeyText(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
