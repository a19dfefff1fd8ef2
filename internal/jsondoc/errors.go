package jsondoc

import (
	"fmt"
	"strings"
)

// SyntaxError describes where and why a document is not JSON.
type SyntaxError struct {
	Msg    string
	Line   int
	Column int
	// py is Python's json.JSONDecodeError text for the same error, whose
	// positions count characters: "Expecting value: line 1 column 1
	// (char 0)".
	py string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: line %d column %d", e.Msg, e.Line, e.Column)
}

// Python is the error as Python's json module words it.
func (e *SyntaxError) Python() string { return e.py }

// PythonError is err as Python's json.loads would word it, when it is a
// SyntaxError; other errors keep their text.
func PythonError(err error) string {
	if se, ok := err.(*SyntaxError); ok && se.py != "" {
		return se.py
	}
	return err.Error()
}

// pyMessages are Python's words for the decoder's errors.
var pyMessages = map[string]string{
	"expecting value": "Expecting value", "extra data": "Extra data",
	"expecting property name enclosed in double quotes": "Expecting property name enclosed in double quotes",
	"expecting ':' delimiter":                           "Expecting ':' delimiter", "expecting ',' delimiter": "Expecting ',' delimiter",
	"invalid control character in string": "Invalid control character at", "invalid \\uXXXX escape": "Invalid \\uXXXX escape",
	"invalid \\escape": "Invalid \\escape", "unterminated string": "Unterminated string starting at",
}

func (d *decoder) errorf(format string, args ...any) error {
	return d.errorAt(d.pos, format, args...)
}

// errorAt reports an error; pyPos is where Python's decoder reports it
// (a byte offset here, turned into characters).
func (d *decoder) errorAt(pyPos int, format string, args ...any) error {
	line, col := 1, 1
	for _, c := range d.data[:min(d.pos, len(d.data))] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	msg := fmt.Sprintf(format, args...)
	pyLine, pyCol, char := 1, 1, 0
	for _, c := range d.data[:min(pyPos, len(d.data))] {
		if c&0xC0 == 0x80 {
			continue // a continuation byte: same character
		}
		char++
		if c == '\n' {
			pyLine++
			pyCol = 1
		} else {
			pyCol++
		}
	}
	pyMsg, ok := pyMessages[format]
	if !ok {
		pyMsg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return &SyntaxError{Msg: msg, Line: line, Column: col,
		py: fmt.Sprintf("%s: line %d column %d (char %d)", pyMsg, pyLine, pyCol, char)}
}
