package jsondoc

import (
	"bufio"
	"strings"
	"unicode/utf8"
)

// Dumps encodes v as Python's json.dumps(v) does with default arguments.
func Dumps(v Value) string {
	var b strings.Builder
	b.Grow(dumpsSize(v))
	e := encoder{b: &b, indent: -1}
	e.value(v, 0)
	return b.String()
}

// DumpsIndent encodes v as Python's json.dumps(v, indent=n) does: one item
// per line, "," and ": " separators.
func DumpsIndent(v Value, n int) string {
	var b strings.Builder
	e := encoder{b: &b, indent: n}
	e.value(v, 0)
	return b.String()
}

// Write writes what Dumps(v) returns to w, and flushes it, as
// WriteIndent does.
func Write(w *bufio.Writer, v Value) error { return WriteIndent(w, v, -1) }

// WriteIndent writes what DumpsIndent(v, n) returns to w, and flushes
// it, without ever holding the whole text: a 100 MB document costs its
// buffer, not another 100 MB (and as much again for a []byte copy).
func WriteIndent(w *bufio.Writer, v Value, n int) error {
	e := encoder{b: w, indent: n}
	e.value(v, 0)
	return w.Flush() // bufio's errors are sticky: the first one
}

// DumpsLen is len(Dumps(v)), without building the text.
func DumpsLen(v Value) int {
	var n counter
	e := encoder{b: &n, indent: -1}
	e.value(v, 0)
	return int(n)
}

type counter int

func (c *counter) WriteString(s string) (int, error) { *c += counter(len(s)); return len(s), nil }
func (c *counter) WriteByte(byte) error              { *c++; return nil }

// sink is where the encoder writes: a strings.Builder, or a bufio.Writer.
type sink interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

type encoder struct {
	b      sink
	indent int // -1: compact Python style
}

func (e *encoder) newline(level int) {
	e.b.WriteByte('\n')
	for i := 0; i < level*e.indent; i++ {
		e.b.WriteByte(' ')
	}
}

func (e *encoder) itemSep(level int) {
	if e.indent < 0 {
		e.b.WriteString(", ")
		return
	}
	e.b.WriteByte(',')
	e.newline(level)
}

func (e *encoder) value(v Value, level int) {
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		if x {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case string:
		writeString(e.b, x)
	case Number:
		e.b.WriteString(x.Text)
	case *Raw:
		e.raw(x, level)
	case []Value:
		if len(x) == 0 {
			e.b.WriteString("[]")
			return
		}
		e.b.WriteByte('[')
		if e.indent >= 0 {
			e.newline(level + 1)
		}
		for i, item := range x {
			if i > 0 {
				e.itemSep(level + 1)
			}
			e.value(item, level+1)
		}
		if e.indent >= 0 {
			e.newline(level)
		}
		e.b.WriteByte(']')
	case *Object:
		if x.Len() == 0 {
			e.b.WriteString("{}")
			return
		}
		e.b.WriteByte('{')
		if e.indent >= 0 {
			e.newline(level + 1)
		}
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				e.itemSep(level + 1)
			}
			k, item := x.At(i)
			writeString(e.b, k)
			e.b.WriteString(": ")
			e.value(item, level+1)
		}
		if e.indent >= 0 {
			e.newline(level)
		}
		e.b.WriteByte('}')
	default:
		panic("jsondoc: not a JSON value")
	}
}

const hexDigits = "0123456789abcdef"

// writeString writes s quoted the way json.dumps(ensure_ascii=True) does:
// short escapes for \" \\ \n \r \t \b \f, \u00XX for other control
// characters and DEL, \uXXXX (surrogate pairs above U+FFFF) for non-ASCII.
func writeString(b sink, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		b.WriteString(s[start:i])
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				writeU(b, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xffff {
			r -= 0x10000
			writeU(b, 0xd800+(r>>10))
			writeU(b, 0xdc00+(r&0x3ff))
		} else {
			writeU(b, r)
		}
		i += size
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

func writeU(b sink, r rune) {
	b.WriteString(`\u`)
	b.WriteByte(hexDigits[(r>>12)&0xf])
	b.WriteByte(hexDigits[(r>>8)&0xf])
	b.WriteByte(hexDigits[(r>>4)&0xf])
	b.WriteByte(hexDigits[r&0xf])
}
