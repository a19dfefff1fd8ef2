package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The start of a kept tail may cut a character: its leftover bytes go,
// instead of showing as U+FFFD.
func TestDecodeTailDropsACutCharacter(t *testing.T) {
	if got := decodeTail([]byte("\x98\x80ok"), true); got != "ok" {
		t.Errorf("cut tail: %q", got)
	}
	if got := decodeTail([]byte("\x98\x80ok"), false); got != "\ufffd\ufffdok" {
		t.Errorf("whole stream: %q", got)
	}
}

// Files are read as Python's text mode reads them: "\r\n" and "\r" end
// lines as "\n"; bad UTF-8 is replaced, where Python raised.
func TestReadTextAsPythonTextMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("a\r\nb\rc\n\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadText(p); err != nil || got != "a\nb\nc\n\ufffd" {
		t.Errorf("ReadText = %q, %v", got, err)
	}
}

func TestReadTailKeepsTheEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte(strings.Repeat("é", 100)+"END"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, dropped, err := ReadTail(p, 10)
	if err != nil || got != "éééEND" || dropped != 193 {
		t.Errorf("ReadTail = %q, %d, %v", got, dropped, err)
	}
	got, dropped, err = ReadTail(p, 1000)
	if err != nil || got != strings.Repeat("é", 100)+"END" || dropped != 0 {
		t.Errorf("ReadTail of a short file = %q, %d, %v", got, dropped, err)
	}
}
