// Package sysctl is the sysctl element: the os-refresh-config step
// 10-sysctl-apply-config, which sets the kernel parameters the
// metadata's "sysctl" object names, and the helpers other elements call
// at image build time, sysctl-set-value, sysctl-write-value and
// sysctl-append-value. Each parameter lives in a file of its own,
// /etc/sysctl.d/<name>.conf, two lines: a comment and "name = value",
// the bytes TripleO's element writes.
package sysctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tripleo-go/agent/nodeconfig"
)

// Dir holds one file per parameter (under nodeconfig.Env.Root).
const Dir = "/etc/sysctl.d"

// DefaultComment is the comment line's text when none is given.
const DefaultComment = "This file is managed via the TripleO sysctl image element."

// fileMode is a new file's: world-readable, as the reference's shell
// redirection made it under the usual umask 022.
const fileMode fs.FileMode = 0o644

// fileOf is the parameter's file.
func fileOf(env nodeconfig.Env, name string) string {
	return env.Path(Dir + "/" + name + ".conf")
}

// content is the file's bytes.
func content(name, value, comment string) []byte {
	return []byte("# " + comment + "\n" + name + " = " + value + "\n")
}

// checkName refuses a name that is not one file in Dir, or that sysctl
// could not read back from the file: empty, with a slash, white space,
// a control character or an equals sign.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%q starts with a dot", name)
	case strings.ContainsAny(name, "/="):
		return fmt.Errorf("%q has a slash or an equals sign", name)
	case strings.IndexFunc(name, isSpaceOrControl) >= 0:
		return fmt.Errorf("%q has white space or a control character", name)
	}
	return nil
}

// checkValue refuses what sysctl would read back as another value.
func checkValue(v string) error {
	if v == "" {
		return errors.New("the value is empty")
	}
	if strings.ContainsAny(v, "\n\r\x00") {
		return fmt.Errorf("%q has a line break", v)
	}
	return nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

// write puts the parameter's file in place (a file whole or not at all),
// keeping the mode of the one it replaces.
func write(env nodeconfig.Env, name, value, comment string) error {
	path := nodeconfig.Resolve(fileOf(env, name))
	if err := nodeconfig.WriteFile(path, content(name, value, comment), nodeconfig.ModeOr(path, fileMode)); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// current reads the parameter's file; ok is false when there is none.
func current(env nodeconfig.Env, name string) (data string, ok bool, err error) {
	b, err := os.ReadFile(fileOf(env, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// hasSetting tells whether the file's text sets name to value: a line
// "name = value", exactly.
func hasSetting(text, name, value string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == name+" = "+value {
			return true
		}
	}
	return false
}

// settingLines are the file's lines that start with name, what the
// reference shows of a conflicting file.
func settingLines(text, name string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return out
}
