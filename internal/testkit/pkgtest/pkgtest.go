// Package pkgtest is what the package tests (test/deb, test/rpm,
// test/elements) share: skipping for a missing tool unless their
// REQUIRE_* variable asks to fail instead, a file's state as a
// byte-for-byte comparison of an image's files sees it, and what apt-get
// fetched and installed in a copy of the cached Debian rootfs, kept
// beside it (AptCache).
package pkgtest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"testing"
)

// Skip skips the test, or fails it when the environment variable require
// is 1 (CI sets it, so that nothing skips there).
func Skip(t testing.TB, require, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(require) == "1" {
		t.Fatalf("%s=1: %s", require, msg)
	}
	t.Skip(msg)
}

// NeedTool skips (or fails, see Skip) without the program name on PATH;
// why says how to get it.
func NeedTool(t testing.TB, require, name, why string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		Skip(t, require, "%s not found (%s)", name, why)
	}
}

// FileState is what a byte-for-byte comparison of a file looks at.
type FileState struct {
	Mode    fs.FileMode
	Content string // a link's target
}

// StateOf returns path's state, and false when nothing is there.
func StateOf(t testing.TB, path string) (FileState, bool) {
	t.Helper()
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return FileState{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		l, err := os.Readlink(path)
		if err != nil {
			t.Fatal(err)
		}
		return FileState{fi.Mode(), l}, true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return FileState{fi.Mode(), string(b)}, true
}

// BinTarget is what make install puts in bin under a program's name (the
// Makefile's PROGRAMS): "" for os-apply-config, a binary of its own
// (cmd/os-apply-config), else the target of a relative link: the
// os-apply-config binary for its legacy name, tripleo-agent for the rest.
func BinTarget(program string) string {
	switch program {
	case "os-apply-config":
		return ""
	case "os-config-applier":
		return "os-apply-config"
	}
	return "tripleo-agent"
}
