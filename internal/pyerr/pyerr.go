// Package pyerr words operating-system errors as Python's OSError does,
// for messages that must read as the reference's.
package pyerr

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// ErrorString words err about path as str(OSError) does:
// "[Errno 21] Is a directory: 'path'". Errors that carry no errno keep
// their Go wording.
func ErrorString(err error, path string) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := errno.Error() // strerror(3), with a lower-case first letter
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return fmt.Sprintf("[Errno %d] %s: %s", int(errno), msg, jsondoc.PyReprString(path))
}
