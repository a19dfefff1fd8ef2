package jsondoc

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str renders v as Python's str() does on the decoded value: strings as
// they are, True/False/None, floats and ints as repr, containers as repr.
func PyStr(v Value) string {
	if s, ok := Decoded(v).(string); ok {
		return s
	}
	return PyRepr(v)
}

// Repr renders v as Python's repr() does on the decoded value.
func PyRepr(v Value) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v Value) {
	switch x := Decoded(v).(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(PyReprString(x))
	case Number:
		switch {
		case x.IsFloat && math.IsInf(x.Float, 1):
			b.WriteString("inf")
		case x.IsFloat && math.IsInf(x.Float, -1):
			b.WriteString("-inf")
		case x.IsFloat && math.IsNaN(x.Float):
			b.WriteString("nan")
		default:
			b.WriteString(x.Text)
		}
	case []Value:
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, item)
		}
		b.WriteByte(']')
	case *Object:
		b.WriteByte('{')
		for i, k := range x.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(PyReprString(k))
			b.WriteString(": ")
			item, _ := x.Get(k)
			writeRepr(b, item)
		}
		b.WriteByte('}')
	default:
		b.WriteString("<?>")
	}
}

// quoteFor picks Python's quote: single, unless the text holds a single
// quote and no double quote.
func quoteFor(hasSingle, hasDouble bool) byte {
	if hasSingle && !hasDouble {
		return '"'
	}
	return '\''
}

// ReprString renders s as Python's repr(str) does.
func PyReprString(s string) string {
	q := quoteFor(strings.ContainsRune(s, '\''), strings.ContainsRune(s, '"'))
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			writeHexEscape(&b, 'x', uint32(r), 2)
		case r < utf8.RuneSelf || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			writeHexEscape(&b, 'x', uint32(r), 2)
		case r < 0x10000:
			writeHexEscape(&b, 'u', uint32(r), 4)
		default:
			writeHexEscape(&b, 'U', uint32(r), 8)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// ReprBytes renders p as Python's repr(bytes) does: b'...'.
func PyReprBytes(p []byte) string {
	q := quoteFor(strings.IndexByte(string(p), '\'') >= 0, strings.IndexByte(string(p), '"') >= 0)
	var b strings.Builder
	b.WriteByte('b')
	b.WriteByte(q)
	for _, c := range p {
		switch {
		case c == q || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			writeHexEscape(&b, 'x', uint32(c), 2)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// ReprTuple renders a tuple of strings as Python's repr(tuple) does; the
// reference logs some exceptions this way.
func PyReprTuple(items ...string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = PyReprString(s)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func writeHexEscape(b *strings.Builder, kind byte, v uint32, width int) {
	b.WriteByte('\\')
	b.WriteByte(kind)
	for i := width - 1; i >= 0; i-- {
		b.WriteByte(hexDigits[(v>>(4*uint(i)))&0xf])
	}
}
