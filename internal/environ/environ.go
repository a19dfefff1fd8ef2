// Package environ reads and edits an environment as a list of
// "NAME=value" strings, the form exec and os.Environ use, so a program's
// environment can be given to it (and replaced in its tests) as data.
package environ

import "strings"

// Lookup is the value of name, and whether it is set.
func Lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Get is the value of name, "" when unset.
func Get(env []string, name string) string {
	v, _ := Lookup(env, name)
	return v
}

// Without is env with name unset; env is not changed.
func Without(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// With is env with name set to value (last), once; env is not changed.
func With(env []string, name, value string) []string {
	return append(Without(env, name), name+"="+value)
}
