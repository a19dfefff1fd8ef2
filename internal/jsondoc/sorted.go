package jsondoc

import "sort"

// DumpsIndentSorted encodes v as Python's json.dumps(v, indent=n,
// sort_keys=True) does: DumpsIndent of a copy of v whose objects have
// their keys sorted (by code point, as Python compares str).
func DumpsIndentSorted(v Value, n int) string {
	return DumpsIndent(sortKeys(v), n)
}

func sortKeys(v Value) Value {
	switch x := Decoded(v).(type) {
	case *Object:
		keys := append([]string(nil), x.Keys()...)
		sort.Strings(keys) // UTF-8 byte order is code point order
		o := NewObject(len(keys))
		for _, k := range keys {
			item, _ := x.Get(k)
			o.Set(k, sortKeys(item))
		}
		return o
	case []Value:
		out := make([]Value, len(x))
		for i, item := range x {
			out[i] = sortKeys(item)
		}
		return out
	}
	return v
}
