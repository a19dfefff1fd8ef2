// Package exitcode names every exit status the programs return, in one
// place. docs/exit-codes.md lists them per program; the values are those of
// the Python reference, so scripts that test them keep working.
package exitcode

import (
	"errors"
	"fmt"
)

const (
	// OK: the run did what was asked (os-apply-config: files written, key
	// printed, boolean key true).
	OK = 0
	// Failure: bad input, a failed render or write, a missing key, a value
	// of the wrong type (os-apply-config), a failed phase (os-refresh-config).
	// os-apply-config --boolean-key also returns it for a false value.
	Failure = 1
	// Usage: the command line could not be parsed (argparse's status).
	Usage = 2
	// LockHeld: os-refresh-config found its lock taken by another run
	// (the reference exits with the errno, EAGAIN).
	LockHeld = 11
	// TimedOut: os-collect-config --one-time did not finish within
	// --one-time-timeout (the status timeout(1) uses).
	TimedOut = 124
	// Terminated: stopped by SIGTERM or SIGINT (128 + SIGTERM).
	Terminated = 143
	// NotBoolean: os-apply-config --boolean-key found no boolean (the
	// reference returns -1, which the shell sees as 255).
	NotBoolean = 255
)

// Error carries the exit status a command wants along with its cause.
// A nil Err means "exit with Code, nothing more to say".
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// With returns an error that makes the program exit with code.
func With(code int, err error) error { return &Error{Code: code, Err: err} }

// Of maps an error returned by a command's Run to the process exit status:
// nil is OK, an *Error carries its own code, anything else is Failure.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}
