package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/spdx"
)

// The command on a real Go binary (this test's own) writes a valid
// document; without a time or a binary it refuses.
func TestRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.spdx.json")
	if err := run([]string{"-binary", self, "-name", "sbom-test", "-version", "1.0", "-created", "1700000000", "-o", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := spdx.Validate(b); err != nil {
		t.Error(err)
	}
	if !strings.Contains(string(b), `"created": "2023-11-14T22:13:20Z"`) {
		t.Error("created is not -created's time")
	}
	for _, args := range [][]string{
		{"-binary", self, "-name", "n", "-version", "1"},
		{"-name", "n", "-version", "1", "-created", "0"},
		{"-binary", "testdata-missing", "-name", "n", "-version", "1", "-created", "0"},
	} {
		if err := run(args); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}
