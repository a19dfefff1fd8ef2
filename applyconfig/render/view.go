package render

import (
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// The reference renders with pystache and a JSON string coercion; this
// package renders with github.com/cbroglie/mustache. The library decides
// three things by reflection on the values it is given: truthiness (its
// isEmpty), what a variable prints (fmt.Fprint) and how names are looked up
// (map keys, struct fields, and exported zero-argument methods). The view
// types below are chosen so those decisions come out as pystache's:
//
//   - Python truthiness: empty dicts and lists, "", 0, 0.0, -0.0, false and
//     null are falsy; everything else, whitespace-only strings included, is
//     truthy. The library calls a map truthy when non-nil, a slice when
//     non-empty, a string when it has non-space text, anything else when it
//     is not the zero value of its type. Hence a nil map for {}, a zero
//     value of a numeric kind for zero numbers, a map kind for blank
//     strings, and a struct{} for null.
//   - Printing: every type implements fmt.Formatter, which fmt.Fprint uses,
//     to print json.dumps. Formatter's Format takes arguments, so the
//     library's method lookup (zero-argument methods only) never mistakes
//     it for a template name such as {{Format}}.
//   - Lookup: dicts are map[string]any so keys resolve as in pystache. The
//     map also holds the original object, for its key order, under the key
//     ".": the library answers the name "." with the context itself before
//     any map lookup and splits every other name containing a dot, so that
//     entry can never be reached from a template (a metadata key containing
//     a dot cannot be reached in pystache either).

// hiddenKey is the map key that can never be looked up; see above.
const hiddenKey = "."

// dict is a non-empty JSON object; nil stands for {}.
type dict map[string]any

// list is a JSON array.
type list []any

// number is a non-zero JSON number, as its Python text.
type number string

// zeroInt, zeroFloat and negZeroFloat are the falsy numbers 0, 0.0, -0.0.
type (
	zeroInt      int
	zeroFloat    int
	negZeroFloat int
)

// boolean is a JSON true or false.
type boolean bool

// null is JSON null: falsy, prints nothing.
type null struct{}

// blankString is a non-empty string of only white space, truthy in Python.
type blankString map[string]any

// newView converts a decoded JSON value to the types above.
func newView(v pyjson.Value) any {
	switch x := v.(type) {
	case *pyjson.Object:
		if x.Len() == 0 {
			return dict(nil)
		}
		d := make(dict, x.Len()+1)
		for _, k := range x.Keys() {
			if k == hiddenKey {
				continue // unreachable from templates; printed from the original
			}
			item, _ := x.Get(k)
			d[k] = newView(item)
		}
		d[hiddenKey] = x
		return d
	case []pyjson.Value:
		l := make(list, len(x))
		for i, item := range x {
			l[i] = newView(item)
		}
		return l
	case string:
		if x != "" && strings.TrimSpace(x) == "" {
			return blankString{hiddenKey: x}
		}
		return x
	case pyjson.Number:
		switch {
		case !x.IsZero():
			return number(x.Text)
		case !x.IsFloat:
			return zeroInt(0)
		case x.Text == "-0.0":
			return negZeroFloat(0)
		default:
			return zeroFloat(0)
		}
	case bool:
		return boolean(x)
	case nil:
		return null{}
	}
	panic(fmt.Sprintf("render: unexpected metadata value %T", v))
}

// toJSON recovers the JSON value a view stands for.
func toJSON(v any) pyjson.Value {
	switch x := v.(type) {
	case dict:
		if x == nil {
			return pyjson.NewObject(0)
		}
		return x[hiddenKey].(*pyjson.Object)
	case list:
		out := make([]pyjson.Value, len(x))
		for i, item := range x {
			out[i] = toJSON(item)
		}
		return out
	case string:
		return x
	case blankString:
		return x[hiddenKey].(string)
	case number:
		return pyjson.Number{Text: string(x)}
	case zeroInt:
		return pyjson.Number{Text: "0"}
	case zeroFloat:
		return pyjson.Number{Text: "0.0", IsFloat: true}
	case negZeroFloat:
		return pyjson.Number{Text: "-0.0", IsFloat: true}
	case boolean:
		return bool(x)
	case null:
		return nil
	}
	return nil
}

// dumps prints what pystache prints for a non-string value: json.dumps.
func dumps(f fmt.State, v any) { _, _ = f.Write([]byte(pyjson.Dumps(toJSON(v)))) }

func (d dict) Format(f fmt.State, _ rune)        { dumps(f, d) }
func (l list) Format(f fmt.State, _ rune)        { dumps(f, l) }
func (n number) Format(f fmt.State, _ rune)      { _, _ = f.Write([]byte(n)) }
func (zeroInt) Format(f fmt.State, _ rune)       { _, _ = f.Write([]byte("0")) }
func (zeroFloat) Format(f fmt.State, _ rune)     { _, _ = f.Write([]byte("0.0")) }
func (negZeroFloat) Format(f fmt.State, _ rune)  { _, _ = f.Write([]byte("-0.0")) }
func (b boolean) Format(f fmt.State, _ rune)     { dumps(f, b) }
func (null) Format(fmt.State, rune)              {}
func (s blankString) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s[hiddenKey].(string))) }
