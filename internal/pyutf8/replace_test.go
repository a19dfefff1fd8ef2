package pyutf8

import "testing"

// Decode agrees with Python 3.11's bytes.decode('utf-8', 'replace') (the
// wants were printed by it): one U+FFFD per maximal invalid subpart.
func TestDecodeAsPythonReplace(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xe2\x82b", "a\ufffdb"},
		{"\xe2\x82", "\ufffd"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"\xf0\x90\x80", "\ufffd"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},
		{"\xef\xbf\xbd", "\ufffd"},
		{"\xff\xfe", "\ufffd\ufffd"},
		{"\xf0\x9f\x98\x80", "\U0001F600"},
	} {
		if got := DecodeReplace([]byte(tc.in)); got != tc.want {
			t.Errorf("DecodeReplace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
