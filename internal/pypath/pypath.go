// Package pypath joins paths as Python's os.path.join does (no cleaning),
// so the paths the programs log and pass on read as the reference's.
package pypath

import "strings"

// Join joins a and b: b if it is absolute, else a + "/" + b unless a is
// empty or already ends with "/".
func Join(a, b string) string {
	switch {
	case strings.HasPrefix(b, "/"):
		return b
	case a == "" || strings.HasSuffix(a, "/"):
		return a + b
	}
	return a + "/" + b
}
