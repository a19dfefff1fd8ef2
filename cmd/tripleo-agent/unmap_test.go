package main

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// Dropping the executable's read-only pages lowers the RSS, and the
// program runs on: what it uses is mapped again.
func TestUnmapStartupCode(t *testing.T) {
	before := rssFileKiB(t)
	unmapStartupCode()
	after := rssFileKiB(t)
	if after >= before {
		t.Errorf("RssFile %d KiB after, %d KiB before: nothing let go", after, before)
	}
	if got := bytes.Repeat([]byte("x"), 3); string(got) != "xxx" {
		t.Fatal("code after the unmap misbehaves")
	}
}

func rssFileKiB(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			n, err := strconv.Atoi(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
