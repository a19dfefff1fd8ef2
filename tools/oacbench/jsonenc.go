package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// member is one key/value pair of an ordered JSON object.
type member struct {
	key string
	val any
}

// object is a JSON object that keeps the order its keys were added in.
// Python dicts are ordered and os-apply-config dumps dicts through {{x}} in
// that order, so the corpus must control key order; a Go map would not.
type object []member

// add appends a key. Keys are unique by construction in the generator.
func (o *object) add(key string, val any) { *o = append(*o, member{key, val}) }

// encodeJSON writes v the way os-collect-config writes its cache files
// (Python json.dump with indent=1 and the default ensure_ascii=True), so the
// metadata looks like what the agent really reads. Supported values: nil,
// bool, int, json.Number (floats, written verbatim so "16.0" stays "16.0"),
// string, []any and object.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	writeJSON(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any, depth int) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(string(x))
	case string:
		writeJSONString(b, x)
	case []any:
		writeJSONList(b, x, depth)
	case object:
		writeJSONObject(b, x, depth)
	default:
		// Only reachable through a bug in the generator.
		panic(fmt.Sprintf("oacbench: cannot encode %T as JSON", v))
	}
}

func writeJSONList(b *bytes.Buffer, l []any, depth int) {
	if len(l) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteByte('[')
	for i, v := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1)
		writeJSON(b, v, depth+1)
	}
	newline(b, depth)
	b.WriteByte(']')
}

func writeJSONObject(b *bytes.Buffer, o object, depth int) {
	if len(o) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1)
		writeJSONString(b, m.key)
		b.WriteString(": ")
		writeJSON(b, m.val, depth+1)
	}
	newline(b, depth)
	b.WriteByte('}')
}

func newline(b *bytes.Buffer, depth int) {
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", depth))
}

// writeJSONString escapes like Python's json with ensure_ascii=True:
// non-ASCII as \uXXXX (surrogate pairs above the BMP), and no HTML escaping
// of <, > and &, unlike Go's encoding/json.
func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			fmt.Fprintf(b, `\u%04x`, r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
