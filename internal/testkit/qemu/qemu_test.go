package qemu

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		arch string
		want []string
	}{
		{"", []string{"/b/x.test", "-a"}},
		{"aarch64", []string{"qemu-aarch64-static", "/b/x.test", "-a"}},
		{"ppc64le", []string{"qemu-ppc64le-static", "/b/x.test", "-a"}},
	} {
		t.Run(tc.arch, func(t *testing.T) {
			t.Setenv(Var, tc.arch)
			if got := Command("/b/x.test", "-a"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Command = %q, want %q", got, tc.want)
			}
		})
	}
}

// ShellExec's line, run by sh, passes the script's arguments as they
// came, whatever the program's path holds.
func TestShellExec(t *testing.T) {
	t.Setenv(Var, "")
	dir := filepath.Join(t.TempDir(), "it's a $dir")
	script := "mkdir -p \"$1\" && printf '#!/bin/sh\\nprintf \"[%%s]\" \"$@\"\\n' >\"$1/echo\" && chmod +x \"$1/echo\""
	if out, err := exec.Command("sh", "-c", script, "sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	line := ShellExec(filepath.Join(dir, "echo"))
	out, err := exec.Command("sh", "-c", line, "sh", "a b", "'c'", "$d").CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if want := "[a b]['c'][$d]"; string(out) != want {
		t.Errorf("%s printed %q, want %q", line, out, want)
	}
}
