// Package jsondoc is the JSON document every stage of the agent passes
// along: objects keep their key order (Python dicts are ordered), integers
// keep every digit, floats print as Python's repr. Loads reads it as
// Python's json.loads does and Dumps writes it with json.dumps' defaults
// (", " and ": " separators, non-ASCII escaped), because the reference's
// files and signals are made that way. PyStr, PyRepr and PyTruthy are what
// Python makes of a value, which the reference puts into some of its
// messages and outputs.
//
// A Value is one of: *Object, []Value, string, Number, bool, or nil (null).
package jsondoc

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// Value is a decoded JSON value; see the package comment for its types.
type Value = any

// Object is a JSON object that remembers the order in which keys were first
// set, as a Python dict does. Small objects (most of them) are searched
// linearly; an object of more than smallObject keys gets an index on its
// first lookup, not before: a decoded document that is only stored and
// compared (os-collect-config's) never pays for the maps, a third of its
// memory. Readers may build it concurrently (atomically; one wins).
type Object struct {
	keys  []string
	vals  []Value
	index atomic.Pointer[map[string]int]
}

const smallObject = 8

// NewObject returns an empty object with room for n keys.
func NewObject(n int) *Object {
	return &Object{keys: make([]string, 0, n), vals: make([]Value, 0, n)}
}

// Len is the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// Keys returns the keys in order. The slice must not be modified.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return o.keys
}

func (o *Object) find(k string) int {
	if len(o.keys) > smallObject {
		idx := o.index.Load()
		if idx == nil {
			m := make(map[string]int, len(o.keys))
			for i, key := range o.keys {
				m[key] = i // keys are unique
			}
			idx = &m
			o.index.Store(idx)
		}
		if i, ok := (*idx)[k]; ok {
			return i
		}
		return -1
	}
	for i, key := range o.keys {
		if key == k {
			return i
		}
	}
	return -1
}

// Get returns the value of key k and whether it is present.
func (o *Object) Get(k string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	if i := o.find(k); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// At returns the i-th key and its value, in order.
func (o *Object) At(i int) (string, Value) { return o.keys[i], o.vals[i] }

// Set sets k to v. A new key goes last; an existing key keeps its place,
// as in Python.
func (o *Object) Set(k string, v Value) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	if idx := o.index.Load(); idx != nil {
		(*idx)[k] = len(o.keys) - 1
	}
}

// Number is a JSON number. Integers keep their literal digits (Python ints
// are unbounded); a number with a fraction or exponent is a float64, as
// Python's json module makes it.
type Number struct {
	// Text is the number as Python's str() and json.dumps print it.
	Text    string
	IsFloat bool
	Float   float64 // set when IsFloat
}

// IsZero reports whether the number is 0, 0.0 or -0.0 (falsy in Python).
func (n Number) IsZero() bool {
	if n.IsFloat {
		return n.Float == 0
	}
	return n.Text == "0"
}

// Int returns a Number for an integer.
func Int(i int64) Number { return Number{Text: strconv.FormatInt(i, 10)} }

// Float returns a Number for a float, printed as Python's repr.
func Float(f float64) Number { return Number{Text: FloatRepr(f), IsFloat: true, Float: f} }

// FloatRepr formats f as Python's repr(float) and json.dumps do: the
// shortest digits that round-trip, in positional notation when the decimal
// exponent is in [-4, 16), else scientific with a two-digit exponent.
func FloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	// 'e' with precision -1 gives the shortest round-trip digits.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // position of the decimal point relative to digits
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case decpt > 16 || decpt < -3:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	case decpt >= len(digits):
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", decpt-len(digits)))
		b.WriteString(".0")
	default:
		b.WriteString(digits[:decpt])
		b.WriteByte('.')
		b.WriteString(digits[decpt:])
	}
	return b.String()
}

// Equal reports whether a and b are equal as Python compares the decoded
// values: objects regardless of key order, 1 == 1.0, true == 1.
func Equal(a, b Value) bool {
	a, b = Decoded(a), Decoded(b)
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool, Number:
		xn, ok1 := numeric(a)
		yn, ok2 := numeric(b)
		if !ok1 || !ok2 {
			return false
		}
		return xn == yn
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.Keys() {
			yv, ok := y.Get(k)
			if !ok {
				return false
			}
			xv, _ := x.Get(k)
			if !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// numeric gives a comparable form of bools and numbers: Python treats
// True == 1 == 1.0. Integers too big for a float compare by their digits.
func numeric(v Value) (string, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	case Number:
		if x.IsFloat {
			if x.Float == 0 {
				return "0", true // -0.0 == 0 in Python
			}
			if x.Float == math.Trunc(x.Float) && math.Abs(x.Float) < 1e300 {
				return strconv.FormatFloat(x.Float, 'f', 0, 64), true
			}
			return x.Text, true
		}
		return x.Text, true
	}
	return "", false
}

// StringList makes a JSON list of strings (for Repr and Dumps of Go
// string slices).
func StringList(ss []string) []Value {
	out := make([]Value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Truthy is Python's truth value of a decoded JSON value: null, false, 0,
// 0.0, "", [] and {} are false.
func PyTruthy(v Value) bool {
	switch x := Decoded(v).(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case Number:
		return !x.IsZero()
	case []Value:
		return len(x) > 0
	case *Object:
		return x.Len() > 0
	}
	return true
}
