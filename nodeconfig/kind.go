package nodeconfig

import "github.com/tripleo-go/agent/internal/jsondoc"

// ValueKind names a metadata value's JSON type for a message ("key is a
// list, not an object").
func ValueKind(v jsondoc.Value) string {
	switch v.(type) {
	case *jsondoc.Object:
		return "an object"
	case []jsondoc.Value:
		return "a list"
	case string:
		return "a string"
	case jsondoc.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
