// Package metadata reads os-apply-config's metadata files and merges them
// into one document, as the reference does: files are read in order, the
// missing ones skipped, each JSON object deep-merged over the result so far
// (later files win; dicts merge key by key, anything else replaces).
package metadata

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyerr"
	"github.com/tripleo-go/agent/internal/pyutf8"
)

// Error is metadata the reference would refuse, in its words.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// LazyFrom is the size from which a file's top-level values are kept as
// their checked bytes (*jsondoc.Raw) until something looks into them:
// the tree of a 100 MB file, and its view for templates, cost 3.4 times
// its size, where a template reads a few keys. Smaller files are decoded
// whole, once, which is quicker when templates read most of them.
var LazyFrom int64 = 4 << 20

// Read reads and merges the files at paths. Empty paths and files that do
// not exist are skipped; a file that cannot be read or is not JSON is an
// error naming it. The values of a file of LazyFrom bytes or more may be
// *jsondoc.Raw, at any depth once merged: Lookup and Subhash look through
// them, jsondoc.Materialized decodes them.
func Read(paths []string) (*jsondoc.Object, error) {
	var merged *jsondoc.Object
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue // os.path.exists: a broken link or unreachable file is absent
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("Could not open %s for reading. %s", p, pyerr.ErrorString(err, p))}
		}
		if msg, bad := pyutf8.DecodeError(data); bad {
			return nil, &Error{Msg: fmt.Sprintf("Could not parse metadata file: %s: %s", p, msg)}
		}
		var doc jsondoc.Value
		if int64(len(data)) >= LazyFrom {
			doc, err = jsondoc.LoadsMembersLazy(data)
		} else {
			doc, err = jsondoc.Loads(data)
		}
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("Could not parse metadata file: %s: %v", p, err)}
		}
		// Only non-empty objects count; other documents are ignored.
		if obj, ok := doc.(*jsondoc.Object); ok && obj.Len() > 0 {
			if merged == nil {
				merged = obj // the first file's tree is the base: no copy
			} else {
				mergeOwned(merged, obj)
			}
		}
	}
	if merged == nil {
		merged = jsondoc.NewObject(0)
	}
	return merged, nil
}

// mergeOwned is Merge for trees no one else holds, as Read's are (each
// node of a decoded file is in one place): where both hold an object, it
// merges into base's in place, as the reference's merge does, instead of
// copying both into a new one. The keys come out in the same order.
func mergeOwned(base, overlay *jsondoc.Object) {
	for i := 0; i < overlay.Len(); i++ {
		k, v := overlay.At(i)
		if old, ok := base.Get(k); ok && isObject(old) && isObject(v) {
			oldObj := members(old).(*jsondoc.Object) // a Raw decodes to a new object
			if _, raw := old.(*jsondoc.Raw); raw {
				base.Set(k, oldObj)
			}
			mergeOwned(oldObj, members(v).(*jsondoc.Object))
			continue
		}
		base.Set(k, v)
	}
}

// Merge deep-merges overlay into base. Where both hold an object under a key
// the objects merge; otherwise overlay's value replaces base's (lists are
// replaced, not joined; null overwrites). New keys go last, as in a Python
// dict. overlay's values are shared, not copied; a *jsondoc.Raw is
// decoded only where both sides hold an object, and only one level.
func Merge(base, overlay *jsondoc.Object) {
	for i := 0; i < overlay.Len(); i++ {
		k, v := overlay.At(i)
		if old, ok := base.Get(k); ok && isObject(old) && isObject(v) {
			oldObj, newObj := members(old).(*jsondoc.Object), members(v).(*jsondoc.Object)
			merged := jsondoc.NewObject(oldObj.Len() + newObj.Len())
			Merge(merged, oldObj)
			Merge(merged, newObj)
			base.Set(k, merged)
			continue
		}
		base.Set(k, v)
	}
}

func isObject(v jsondoc.Value) bool {
	switch x := v.(type) {
	case *jsondoc.Object:
		return true
	case *jsondoc.Raw:
		return x.IsObject()
	}
	return false
}

// members is v with a *Raw decoded one level (its members may be Raw).
func members(v jsondoc.Value) jsondoc.Value {
	if r, ok := v.(*jsondoc.Raw); ok {
		return r.Members()
	}
	return v
}

// Subhash returns the object at the dotted path keys; every step must be an
// object.
func Subhash(cfg *jsondoc.Object, keys string) (*jsondoc.Object, error) {
	if keys == "" {
		return cfg, nil
	}
	cur := cfg
	for _, k := range strings.Split(keys, ".") {
		v, _ := cur.Get(k)
		next, ok := members(v).(*jsondoc.Object)
		if !ok {
			return nil, &Error{Msg: fmt.Sprintf("key '%s' does not correspond to a hash in the metadata file", keys)}
		}
		cur = next
	}
	return cur, nil
}

// Lookup finds the dotted key in cfg as the reference's --key does: each
// step is an object key or, in a list, an index (Python's int(), so "-1"
// is the last item). A missing step or a null value is not found. The
// value found holds no *jsondoc.Raw.
func Lookup(cfg *jsondoc.Object, key string) (jsondoc.Value, bool) {
	var cur jsondoc.Value = cfg
	for _, k := range strings.Split(key, ".") {
		switch x := members(cur).(type) {
		case *jsondoc.Object:
			v, ok := x.Get(k)
			if !ok || v == nil {
				return nil, false
			}
			cur = v
		case []jsondoc.Value:
			i, ok := pyInt(k)
			if ok && i < 0 {
				i += len(x)
			}
			if !ok || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	if cur == nil {
		return nil, false
	}
	return jsondoc.Materialized(cur), true
}

// pyInt parses s as Python's int(s) does for small values: surrounding
// white space, a sign, and single underscores between digits are allowed.
func pyInt(s string) (int, bool) {
	s = strings.TrimSpace(s)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || body[0] == '_' || body[len(body)-1] == '_' || strings.Contains(body, "__") {
		return 0, false
	}
	i, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	return i, err == nil
}
