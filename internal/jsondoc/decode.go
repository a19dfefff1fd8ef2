package jsondoc

import (
	"math"
	"unicode/utf8"
	"unsafe"
)

// MaxDepth bounds nesting so hostile input cannot exhaust the stack.
// Python's own limit (its recursion limit) is lower, about 1000.
const MaxDepth = 10000

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
