// Package qemu is what a test needs to start a binary of its own
// architecture (the test binary itself, or a program built for the same
// GOARCH) when make cross-test runs it under qemu-user. Without
// binfmt_misc the kernel cannot execute a foreign binary, so such a child
// must be started through the emulator too; programs the test only finds
// by name on PATH (sh, the system's tools) are native and need nothing.
package qemu

import (
	"os"
	"strings"
)

// Var names the variable make cross-test sets in the environment of the
// test binaries it runs under qemu-user (go test -exec): the emulator's
// name for the architecture (aarch64, ppc64le). Unset natively.
const Var = "TRIPLEO_AGENT_QEMU"

// Arches maps each GOARCH that make cross-test emulates to qemu's name
// for it (qemu-<name>-static).
var Arches = map[string]string{"arm64": "aarch64", "ppc64le": "ppc64le"}

// Arch is the architecture qemu emulates for this test, "" natively.
func Arch() string { return os.Getenv(Var) }

// Emulator is the qemu-user program for arch (a name of Arches' values).
func Emulator(arch string) string { return "qemu-" + arch + "-static" }

// Command is the argv that runs the program at path, built for this
// test's architecture, with args: path itself natively, through the
// emulator under qemu.
func Command(path string, args ...string) []string {
	argv := []string{path}
	if a := Arch(); a != "" {
		argv = []string{Emulator(a), path}
	}
	return append(argv, args...)
}

// ShellExec is a sh command line that replaces the shell with the
// program at path, given the script's own arguments ("$@"), through the
// emulator under qemu.
func ShellExec(path string) string {
	words := Command(path)
	for i, w := range words {
		words[i] = ShellQuote(w)
	}
	return "exec " + strings.Join(words, " ") + ` "$@"`
}

// ShellQuote quotes s as one sh word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
