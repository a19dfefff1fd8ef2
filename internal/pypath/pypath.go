// Package pypath is Python's os.path where the programs must agree with
// the reference: Join as os.path.join (no cleaning), so the paths the
// programs log and pass on read as the reference's, and IsDir as
// os.path.isdir.
package pypath

import (
	"os"
	"strings"
)

// IsDir reports whether p is a directory, following links; false when it
// cannot be stat'ed.
func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

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
