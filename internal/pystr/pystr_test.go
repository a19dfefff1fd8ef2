package pystr

import "testing"

// Python's str.isspace, which Go's unicode.IsSpace is but for U+001C to
// U+001F.
func TestIsSpace(t *testing.T) {
	for r, want := range map[rune]bool{' ': true, '\t': true, '\x1c': true, '\x1f': true, '\u0085': true, '\u00a0': true, '\u3000': true,
		'a': false, '\x1b': false, '\u200b': false, '\ufeff': false} {
		if IsSpace(r) != want {
			t.Errorf("IsSpace(%U) = %v, want %v", r, !want, want)
		}
	}
}
