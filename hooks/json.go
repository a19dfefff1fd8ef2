package hooks

import (
	"sort"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// DumpsSorted is Python's json.dumps(v, indent=4, sort_keys=True,
// separators=(',', ': ')), the data files of the hiera and json-file
// hooks: pyjson's indented form of a copy of v whose objects have their
// keys sorted (by code point, as Python compares str).
func DumpsSorted(v pyjson.Value) string {
	return pyjson.DumpsIndent(sortKeys(v), 4)
}

func sortKeys(v pyjson.Value) pyjson.Value {
	switch x := v.(type) {
	case *pyjson.Object:
		keys := append([]string(nil), x.Keys()...)
		sort.Strings(keys) // UTF-8 byte order is code point order
		o := pyjson.NewObject(len(keys))
		for _, k := range keys {
			item, _ := x.Get(k)
			o.Set(k, sortKeys(item))
		}
		return o
	case []pyjson.Value:
		out := make([]pyjson.Value, len(x))
		for i, item := range x {
			out[i] = sortKeys(item)
		}
		return out
	}
	return v
}
