package pyerr

import (
	"errors"
	"os"
	"testing"
)

func TestErrorString(t *testing.T) {
	dir := t.TempDir()
	_, err := os.ReadFile(dir)
	if got, want := ErrorString(err, dir), "[Errno 21] Is a directory: '"+dir+"'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ErrorString(errors.New("plain"), "x"); got != "plain" {
		t.Errorf("got %q", got)
	}
}
