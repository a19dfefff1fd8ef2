package pyutf8

import "testing"

// Expected texts are Python 3.11's str(UnicodeDecodeError) for
// data.decode('utf-8').
func TestDecodeError(t *testing.T) {
	for in, want := range map[string]string{
		"caf\xe9!":         "'utf-8' codec can't decode byte 0xe9 in position 3: invalid continuation byte",
		"\xe9":             "'utf-8' codec can't decode byte 0xe9 in position 0: unexpected end of data",
		"ab\xe4\xb8":       "'utf-8' codec can't decode bytes in position 2-3: unexpected end of data",
		"\xe4\xb8a":        "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte",
		"\x80":             "'utf-8' codec can't decode byte 0x80 in position 0: invalid start byte",
		"\xc0\xaf":         "'utf-8' codec can't decode byte 0xc0 in position 0: invalid start byte",
		"\xed\xa0\x80":     "'utf-8' codec can't decode byte 0xed in position 0: invalid continuation byte",
		"\xf4\x90\x80\x80": "'utf-8' codec can't decode byte 0xf4 in position 0: invalid continuation byte",
		"\xff":             "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
	} {
		got, ok := DecodeError([]byte(in))
		if !ok || got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	if _, ok := DecodeError([]byte("héllo 中文 😀")); ok {
		t.Error("valid UTF-8 reported as an error")
	}
}
