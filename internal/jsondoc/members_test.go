package jsondoc

import (
	"strings"
	"testing"
)

// LoadsMembersLazy reads what Loads reads, errors and all, keeping the
// containers one level down as Raw; Members goes one level further, and
// Materialized gives back the tree Loads makes.
func TestLoadsMembersLazy(t *testing.T) {
	docs := append([]string{
		`{"a": {"x": 1, "x": 2}, "b": [1, {}], "c": 3, "a": {"y": []}}`, // a repeated key at both levels
		`[{"k": 1}, [], "s", null, {"k": 1, "k": 2}]`, `{"a" 1}`, `[1,`, `{"a": {"b": [}}`,
		`{"a": "\u0061", "\u0061": {"n": -0.0}}`, `"s"`, `7`, ` {} `, `{"deep": [[[{"x": "\u00e9"}]]]}`,
	}, jsonSeeds...)
	for _, doc := range docs {
		tree, terr := Loads([]byte(doc))
		lazy, lerr := LoadsMembersLazy([]byte(doc))
		if (terr == nil) != (lerr == nil) || terr != nil && (PythonError(terr) != PythonError(lerr) || terr.Error() != lerr.Error()) {
			t.Errorf("%q: errors %v and %v", doc, terr, lerr)
			continue
		}
		if terr != nil {
			continue
		}
		if HoldsRaw(tree) {
			t.Errorf("%q: Loads made a Raw", doc)
		}
		m := Materialized(lazy)
		if HoldsRaw(m) || Dumps(m) != Dumps(tree) || DumpsIndent(lazy, 2) != DumpsIndent(tree, 2) ||
			!Equal(lazy, tree) || PyRepr(m) != PyRepr(tree) {
			t.Errorf("%q: lazy %s, materialized %s", doc, Dumps(lazy), Dumps(m))
		}
		for _, member := range members(lazy) {
			r, ok := member.(*Raw)
			if !ok {
				if HoldsRaw(member) {
					t.Errorf("%q: %s holds a Raw two levels down", doc, Dumps(member))
				}
				continue
			}
			if r.IsObject() != strings.HasPrefix(r.src, "{") {
				t.Errorf("%q: IsObject of %s", doc, r.src)
			}
			one := r.Members()
			if Dumps(one) != Dumps(r.Decode()) || Dumps(Materialized(one)) != Dumps(r.Decode()) {
				t.Errorf("%q: Members of %s is %s", doc, r.src, Dumps(one))
			}
		}
	}
}

func members(v Value) []Value {
	switch x := v.(type) {
	case *Object:
		return x.vals
	case []Value:
		return x
	}
	return nil
}

// Materialized copies what it changes, and leaves what holds no Raw as
// it is: others may share either.
func TestMaterializedCopies(t *testing.T) {
	lazy, err := LoadsMembersLazy([]byte(`{"a": {"b": 1}, "c": 2, "d": [3]}`))
	if err != nil {
		t.Fatal(err)
	}
	obj := lazy.(*Object)
	before := Dumps(obj)
	m := Materialized(obj).(*Object)
	if a, _ := obj.Get("a"); a == nil || !HoldsRaw(obj) {
		t.Fatalf("the original changed: %s", Dumps(obj))
	}
	m.Set("e", 4)
	if Dumps(obj) != before || obj.Len() != 3 {
		t.Fatalf("a Set on the copy reached the original: %s", Dumps(obj))
	}
	plain, _ := Loads([]byte(`{"a": [1, {"b": 2}]}`))
	if Materialized(plain) != plain {
		t.Fatal("a tree without Raw was copied")
	}
}
