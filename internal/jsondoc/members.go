package jsondoc

import (
	"slices"
	"unsafe"
)

// A document read one level at a time: os-apply-config's metadata is
// checked whole, but a template looks into a few of its keys, so only
// those become trees.

// LoadsMembersLazy is LoadsOwned, but each member of the document (an
// object's values, a list's items) that is an object or a list Raw can
// hold is kept as a *Raw. Errors are LoadsOwned's: a member Raw cannot
// hold is read as LoadsOwned reads it, which words the error. data must
// never be modified afterwards.
func LoadsMembersLazy(data []byte) (Value, error) {
	d := decoder{data: data, src: unsafe.String(unsafe.SliceData(data), len(data)), lazyAll: true}
	return d.document()
}

// Members is r decoded one level, as LoadsMembersLazy reads it: its
// members that are objects or lists stay *Raw.
func (r *Raw) Members() Value {
	d := rawDecoder(r.src)
	d.lazyAll = true
	v, err := d.document()
	if err != nil {
		panic("jsondoc: a checked Raw no longer decodes: " + err.Error())
	}
	return v
}

// IsObject reports whether r holds an object (else a list or a scalar).
func (r *Raw) IsObject() bool {
	d := rawDecoder(r.src)
	d.skipSpace()
	return d.pos < len(d.data) && d.data[d.pos] == '{'
}

// Materialized is v with every *Raw in it decoded, for code that
// type-switches on values. A container holding no Raw is returned as it
// is; one that holds some is copied, never changed (others may share it).
func Materialized(v Value) Value {
	m, _ := materialized(v)
	return m
}

// materialized is Materialized and whether it made anything new.
func materialized(v Value) (Value, bool) {
	switch x := v.(type) {
	case *Raw:
		return x.Decode(), true
	case *Object:
		var vals []Value // made on the first member that changes
		for i, item := range x.vals {
			m, changed := materialized(item)
			if changed && vals == nil {
				vals = slices.Clone(x.vals)
			}
			if vals != nil {
				vals[i] = m
			}
		}
		if vals == nil {
			return x, false
		}
		// The keys are shared, capped so that a Set on either copy
		// cannot write into the other's.
		return &Object{keys: x.keys[:len(x.keys):len(x.keys)], vals: vals}, true
	case []Value:
		var out []Value
		for i, item := range x {
			m, changed := materialized(item)
			if changed && out == nil {
				out = slices.Clone(x)
			}
			if out != nil {
				out[i] = m
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}

// HoldsRaw reports whether v, or anything in it, is a *Raw.
func HoldsRaw(v Value) bool {
	switch x := v.(type) {
	case *Raw:
		return true
	case *Object:
		return slices.ContainsFunc(x.vals, HoldsRaw)
	case []Value:
		return slices.ContainsFunc(x, HoldsRaw)
	}
	return false
}
