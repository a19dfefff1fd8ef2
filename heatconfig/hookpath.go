package heatconfig

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// hookName keeps the characters of a group that may name a hook file:
// '-', '_' and letters and digits of any script (Python's isalnum), so
// "Heat::Ungrouped" looks for "HeatUngrouped" and no group can name a
// path.
func hookName(group string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) {
			return r
		}
		return -1
	}, group)
}

// findHook returns the first dir/<hook name> that exists, in the order of
// the search path.
func findHook(dirs []string, group string) (string, bool) {
	name := hookName(group)
	if name == "" {
		return "", false
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}
