package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
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
// (Python json.dump with indent=1), so the metadata looks like what the
// agent really reads. Supported values: nil, bool, int, json.Number (floats,
// written verbatim so "16.0" stays "16.0"), string, []any and object.
func encodeJSON(v any) []byte {
	return []byte(jsondoc.DumpsIndent(toPy(v), 1) + "\n")
}

func toPy(v any) jsondoc.Value {
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int:
		return jsondoc.Int(int64(x))
	case json.Number:
		return jsondoc.Number{Text: string(x), IsFloat: strings.ContainsAny(string(x), ".eE")}
	case []any:
		out := make([]jsondoc.Value, len(x))
		for i, item := range x {
			out[i] = toPy(item)
		}
		return out
	case object:
		obj := jsondoc.NewObject(len(x))
		for _, m := range x {
			obj.Set(m.key, toPy(m.val))
		}
		return obj
	}
	panic(fmt.Sprintf("encodeJSON: unsupported %T", v))
}
