// Package doccmd turns a command line a README shows (test/docs holds the
// README to the test that quotes it) into the arguments a test runs: the
// README's words, with each glob replaced by the file the test built, so
// that what a reader types is what was run.
package doccmd

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Args returns line's words after "sudo PROGRAM", each word holding a glob
// (*) replaced by file, whose name the glob must match.
func Args(line, program, file string) ([]string, error) {
	words := strings.Fields(line)
	if len(words) < 2 || words[0] != "sudo" || words[1] != program {
		return nil, fmt.Errorf("%q: want \"sudo %s ...\"", line, program)
	}
	args := words[2:]
	globs := 0
	for i, w := range args {
		if !strings.Contains(w, "*") {
			continue
		}
		globs++
		ok, err := filepath.Match(filepath.Base(w), filepath.Base(file))
		if err != nil || !ok {
			return nil, fmt.Errorf("%q: %s does not name the package built, %s", line, w, filepath.Base(file))
		}
		args[i] = file
	}
	if globs != 1 {
		return nil, fmt.Errorf("%q: want one glob naming the package, found %d", line, globs)
	}
	return args, nil
}
