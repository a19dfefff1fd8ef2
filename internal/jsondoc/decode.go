package jsondoc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
// Python's own limit (its recursion limit) is lower, about 1000.
const MaxDepth = 10000

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

// Loads decodes one JSON document as Python's json.loads does: duplicate
// keys keep their first position and their last value, NaN and Infinity are
// accepted, control characters inside strings are not.
func Loads(data []byte) (Value, error) {
	// One string for the whole document: strings without escapes and
	// numbers are slices of it, which saves an allocation per value.
	return loads(data, string(data))
}

// LoadsOwned is Loads for a caller that hands data over: the result's
// strings share its bytes instead of a copy of them (a 100 MB document
// then costs 100 MB less). data must never be modified afterwards.
func LoadsOwned(data []byte) (Value, error) {
	return loads(data, unsafe.String(unsafe.SliceData(data), len(data)))
}

func loads(data []byte, src string) (Value, error) {
	d := decoder{data: data, src: src}
	return d.document()
}

func (d *decoder) document() (Value, error) {
	if !utf8.Valid(d.data) {
		return nil, &SyntaxError{Msg: "not valid UTF-8", Line: 1, Column: 1}
	}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.pos < len(d.data) {
		return nil, d.errorf("extra data")
	}
	return v, nil
}

type decoder struct {
	data []byte
	src  string // the same bytes
	pos  int
	// Members of the objects and arrays being read, innermost last; each
	// container is copied out at its exact size when it closes.
	keys []string
	vals []Value
	// seen finds a large object's duplicate keys (newObject); spare
	// holds the maps of the large objects skip has finished with.
	seen  map[string]int
	spare []map[string]bool
	// The members named lazyKey of objects at lazyDepth are read as Raw
	// (LoadsOwnedLazy); none when lazyKey is empty. lazyAll: every member
	// and item at lazyDepth (LoadsMembersLazy).
	lazyKey   string
	lazyDepth int
	lazyAll   bool
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

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) hasPrefix(s string) bool {
	return len(d.data)-d.pos >= len(s) && string(d.data[d.pos:d.pos+len(s)]) == s
}

func (d *decoder) value(depth int) (Value, error) {
	if depth > MaxDepth {
		return nil, d.errorf("nested too deeply")
	}
	if d.pos >= len(d.data) {
		return nil, d.errorf("expecting value")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		if d.hasPrefix("-Infinity") {
			d.pos += len("-Infinity")
			return Float(math.Inf(-1)), nil
		}
		return d.number()
	}
	for _, lit := range []struct {
		text string
		val  Value
	}{
		{"null", nil}, {"true", true}, {"false", false},
		{"NaN", Float(math.NaN())}, {"Infinity", Float(math.Inf(1))},
	} {
		if d.hasPrefix(lit.text) {
			d.pos += len(lit.text)
			return lit.val, nil
		}
	}
	return nil, d.errorf("expecting value")
}

func (d *decoder) object(depth int) (Value, error) {
	d.pos++ // {
	baseK, baseV := len(d.keys), len(d.vals)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return NewObject(0), nil
	}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("expecting property name enclosed in double quotes")
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("expecting ':' delimiter")
		}
		d.pos++
		d.skipSpace()
		var v Value
		if (d.lazyAll || d.lazyKey != "" && k == d.lazyKey) && depth == d.lazyDepth {
			if r := d.lazy(depth + 1); r != nil {
				v = r
			}
		}
		if v == nil {
			if v, err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("expecting ',' delimiter")
		}
		switch d.data[d.pos] {
		case '}':
			d.pos++
			keys, vals := d.keys[baseK:], d.vals[baseV:]
			obj := d.newObject(keys, vals)
			clear(vals)
			d.keys, d.vals = d.keys[:baseK], d.vals[:baseV]
			return obj, nil
		case ',':
			d.pos++
			d.skipSpace()
		default:
			return nil, d.errorf("expecting ',' delimiter")
		}
	}
}

// newObject is an object of keys and vals; a key given twice keeps its
// first place and its last value, as in Python. A large object's
// duplicates are found with a map of the decoder's, reused, so that the
// object gets no index until something looks a key up.
func (d *decoder) newObject(keys []string, vals []Value) *Object {
	obj := NewObject(len(keys))
	if len(keys) <= smallObject {
		for i := range keys {
			obj.Set(keys[i], vals[i])
		}
		return obj
	}
	if d.seen == nil {
		d.seen = make(map[string]int, len(keys))
	}
	clear(d.seen)
	for i, k := range keys {
		if j, dup := d.seen[k]; dup {
			obj.vals[j] = vals[i]
			continue
		}
		d.seen[k] = len(obj.keys)
		obj.keys, obj.vals = append(obj.keys, k), append(obj.vals, vals[i])
	}
	return obj
}

func (d *decoder) array(depth int) (Value, error) {
	d.pos++ // [
	base := len(d.vals)
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return []Value{}, nil
	}
	for {
		var v Value
		if d.lazyAll && depth == d.lazyDepth {
			if r := d.lazy(depth + 1); r != nil {
				v = r
			}
		}
		if v == nil {
			var err error
			if v, err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		d.vals = append(d.vals, v)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.errorf("expecting ',' delimiter")
		}
		switch d.data[d.pos] {
		case ']':
			d.pos++
			arr := append([]Value(nil), d.vals[base:]...)
			clear(d.vals[base:])
			d.vals = d.vals[:base]
			return arr, nil
		case ',':
			d.pos++
			d.skipSpace()
		default:
			return nil, d.errorf("expecting ',' delimiter")
		}
	}
}

// number follows Python's scanner: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?
func (d *decoder) number() (Value, error) {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		d.pos = start
		return nil, d.errorf("expecting value")
	}
	isFloat := false
	if d.pos+1 < len(d.data) && d.data[d.pos] == '.' && isDigit(d.data[d.pos+1]) {
		d.pos++
		digits()
		isFloat = true
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		save := d.pos
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			d.pos = save // not an exponent: Python stops the number here
		} else {
			isFloat = true
		}
	}
	lit := d.src[start:d.pos]
	if !isFloat {
		if lit == "-0" {
			lit = "0"
		}
		return Number{Text: lit}, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isRangeErr(err) {
		return nil, d.errorf("bad number %q", lit)
	}
	return Float(f), nil // out of range gives ±Inf or 0, as in Python
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.errorf("invalid control character in string")
		}
		d.pos++
	}
	// Escapes only shrink: the text up to the closing quote bounds the
	// decoded string, so buf never grows, and becomes the string as it
	// is (a 100 MB escaped value costs 100 MB, not three times that).
	end := d.pos
	for end < len(d.data) && d.data[end] != '"' {
		if d.data[end] == '\\' {
			end++
		}
		end++
	}
	buf := make([]byte, d.pos-start, min(end, len(d.data))-start)
	copy(buf, d.data[start:d.pos])
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
		case c < 0x20:
			return "", d.errorf("invalid control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		d.pos++ // backslash
		if d.pos >= len(d.data) {
			break
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			// Python's scanner wants a character after the four digits
			// (the closing quote, at least): without one it words the
			// error as a bad escape, not as an unterminated string.
			uAt := d.pos - 1
			r, ok := d.hex4()
			if !ok || d.pos >= len(d.data) {
				return "", d.errorAt(uAt, "invalid \\uXXXX escape")
			}
			if utf16.IsSurrogate(r) && len(d.data)-d.pos > 6 && d.hasPrefix(`\u`) {
				save := d.pos
				d.pos += 2
				if r2, ok := d.hex4(); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
					r = utf16.DecodeRune(r, r2)
				} else {
					d.pos = save
				}
			}
			// A lone surrogate cannot be UTF-8; it becomes U+FFFD.
			buf = utf8.AppendRune(buf, r)
		default:
			d.pos--
			return "", d.errorAt(d.pos-1, "invalid \\escape")
		}
	}
	return "", d.errorAt(start-1, "unterminated string")
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.data)-d.pos < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d.data[d.pos:d.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.pos += 4
	return rune(n), true
}
