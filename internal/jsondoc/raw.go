package jsondoc

import (
	"errors"
	"unsafe"

	"github.com/tripleo-go/agent/internal/pyutf8"
)

// Raw is a JSON document kept as the bytes it was read from: checked when
// made (Loads would read it, and no object repeats a key), decoded only
// when something looks inside, and written by Dumps and WriteIndent
// straight from its bytes, exactly as they write the decoded document. A
// 100 MB file that is only stored and compared (os-collect-config's local
// collector) then costs its bytes, not a tree 1.2 times their size too.
//
// Raw is a Value for Dumps, WriteIndent, Equal, PyTruthy, PyStr and
// PyRepr; code that type-switches on values must call Decode first.
type Raw struct{ src string }

// LoadsBytesLazy is LoadsBytesOwned, but a document that is valid and
// repeats no key within an object comes back as a *Raw over data. A
// repeated key (first place, last value: not the bytes' order) and any
// error take LoadsBytesOwned's way, so results and errors are its own.
func LoadsBytesLazy(data []byte) (Value, error) {
	if _, bad := pyutf8.DecodeError(data); !bad && check(data) {
		return &Raw{src: unsafe.String(unsafe.SliceData(data), len(data))}, nil
	}
	return LoadsBytesOwned(data)
}

// Decode is the document as Loads reads it; its strings share r's bytes.
func (r *Raw) Decode() Value {
	d := rawDecoder(r.src)
	v, err := loads(d.data, r.src)
	if err != nil {
		panic("jsondoc: a checked Raw no longer decodes: " + err.Error())
	}
	return v
}

// Decoded is v with a *Raw decoded; any other value is returned as is.
func Decoded(v Value) Value {
	if r, ok := v.(*Raw); ok {
		return r.Decode()
	}
	return v
}

func rawDecoder(src string) *decoder {
	return &decoder{data: unsafe.Slice(unsafe.StringData(src), len(src)), src: src}
}

// check reports whether data is one JSON document that Loads accepts and
// that has no object with a repeated key, building nothing that outlives
// the call.
func check(data []byte) bool {
	d := rawDecoder(unsafe.String(unsafe.SliceData(data), len(data)))
	d.skipSpace()
	if !d.skip(0) {
		return false
	}
	d.skipSpace()
	return d.pos == len(d.data)
}

// errSkip is any reason to leave a document to Loads (which words errors).
var errSkip = errors.New("not for Raw")

// skip reads one value as value does, keeping nothing but the keys of
// the objects being read (to see a repeated one).
func (d *decoder) skip(depth int) bool {
	if depth > MaxDepth || d.pos >= len(d.data) {
		return false
	}
	switch d.data[d.pos] {
	case '{':
		return d.skipObject(depth) == nil
	case '[':
		d.pos++
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			d.skipSpace()
			if d.pos >= len(d.data) {
				return false
			}
			switch d.data[d.pos] {
			case ']':
				d.pos++
				return true
			case ',':
				d.pos++
				d.skipSpace()
			default:
				return false
			}
		}
	case '"':
		return d.skipStr()
	}
	_, err := d.value(depth) // a number or a literal: nothing kept
	return err == nil
}

// skipStr reads a string value as str does, building nothing: it
// accepts exactly the strings str accepts.
func (d *decoder) skipStr() bool {
	d.pos++ // opening quote
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return true
		case c < 0x20:
			return false
		case c != '\\':
			d.pos++
			continue
		}
		d.pos++ // backslash
		if d.pos >= len(d.data) {
			return false
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			// four hex digits and a character after them (str's rule);
			// a surrogate pair's second half is an escape of its own.
			if _, ok := d.hex4(); !ok || d.pos >= len(d.data) {
				return false
			}
		default:
			return false
		}
	}
	return false
}

func (d *decoder) skipObject(depth int) error {
	d.pos++ // {
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return nil
	}
	base := len(d.keys)
	var seen map[string]bool // a large object's keys
	defer func() {
		d.keys = d.keys[:base]
		d.spareSeen(seen)
	}()
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return errSkip
		}
		k, err := d.str()
		if err != nil {
			return err
		}
		if seen != nil {
			if seen[k] {
				return errSkip
			}
			seen[k] = true
		} else {
			for _, prev := range d.keys[base:] {
				if prev == k {
					return errSkip
				}
			}
			d.keys = append(d.keys, k)
			if len(d.keys)-base > smallObject {
				seen = d.takeSeen()
				for _, prev := range d.keys[base:] {
					seen[prev] = true
				}
			}
		}
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return errSkip
		}
		d.pos++
		d.skipSpace()
		if !d.skip(depth + 1) {
			return errSkip
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return errSkip
		}
		switch d.data[d.pos] {
		case '}':
			d.pos++
			return nil
		case ',':
			d.pos++
			d.skipSpace()
		default:
			return errSkip
		}
	}
}

// takeSeen is an empty map for a large object's keys: one that an
// object before it used, when there is one. A 100 MB document of
// thousands of large objects then makes a few maps, not thousands (of
// garbage that a process over its memory limit collects at once).
func (d *decoder) takeSeen() map[string]bool {
	if n := len(d.spare); n > 0 {
		m := d.spare[n-1]
		d.spare = d.spare[:n-1]
		return m
	}
	return make(map[string]bool, 2*smallObject)
}

// spareSeen keeps m, emptied, for the next large object; a map of a very
// large object is dropped, since emptying it costs its size each time.
func (d *decoder) spareSeen(m map[string]bool) {
	if m != nil && len(m) <= maxSpareSeen {
		clear(m)
		d.spare = append(d.spare, m)
	}
}

const maxSpareSeen = 1 << 12

// raw writes a checked document as value writes its decoded tree, one
// token at a time.
func (e *encoder) raw(r *Raw, level int) {
	d := rawDecoder(r.src)
	d.skipSpace()
	e.rawValue(d, level)
}

func (e *encoder) rawValue(d *decoder, level int) {
	open := d.data[d.pos]
	if open == '"' {
		s, _ := d.str()
		writeString(e.b, s)
		return
	}
	if open != '{' && open != '[' {
		v, _ := d.value(0) // a number or a literal
		e.value(v, level)
		return
	}
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	d.pos++
	d.skipSpace()
	if d.data[d.pos] == closer {
		d.pos++
		e.b.WriteByte(open)
		e.b.WriteByte(closer)
		return
	}
	e.b.WriteByte(open)
	if e.indent >= 0 {
		e.newline(level + 1)
	}
	for {
		if open == '{' {
			k, _ := d.str()
			writeString(e.b, k)
			e.b.WriteString(": ")
			d.skipSpace()
			d.pos++ // :
			d.skipSpace()
		}
		e.rawValue(d, level+1)
		d.skipSpace()
		c := d.data[d.pos]
		d.pos++
		d.skipSpace()
		if c == closer {
			break
		}
		e.itemSep(level + 1)
	}
	if e.indent >= 0 {
		e.newline(level)
	}
	e.b.WriteByte(closer)
}

// LoadsOwnedLazy is LoadsOwned, but the value of each member named key
// of an object at depth (0: the document itself) is kept as a *Raw when
// it is an object or a list that Raw can hold: a deployments list's
// configs, which 55-heat-config only passes on.
func LoadsOwnedLazy(data []byte, key string, depth int) (Value, error) {
	d := decoder{data: data, src: unsafe.String(unsafe.SliceData(data), len(data)), lazyKey: key, lazyDepth: depth}
	return d.document()
}

// lazy reads the value of a member named lazyKey as a *Raw, when it is
// a container that skip accepts; otherwise it leaves the position alone
// and returns nil, for value to read it (and word its error).
func (d *decoder) lazy(depth int) *Raw {
	if d.pos >= len(d.data) || (d.data[d.pos] != '{' && d.data[d.pos] != '[') {
		return nil
	}
	start, keys := d.pos, len(d.keys)
	if !d.skip(depth) {
		d.pos, d.keys = start, d.keys[:keys]
		return nil
	}
	return &Raw{src: d.src[start:d.pos]}
}
