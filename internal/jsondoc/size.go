package jsondoc

// dumpsSize is the length of Dumps(v) when no string in v needs an
// escape (the usual case; escapes only lengthen the text), found by a
// walk that looks at lengths only: Dumps sizes its buffer with it once
// instead of doubling it a dozen times for a big value. A *Raw counts as
// its source, which is near enough: its text is re-spaced.
func dumpsSize(v Value) int {
	switch x := v.(type) {
	case nil:
		return len("null")
	case bool:
		if x {
			return len("true")
		}
		return len("false")
	case string:
		return len(x) + 2
	case Number:
		return len(x.Text)
	case *Raw:
		return len(x.src)
	case []Value:
		n := 2 + 2*max(len(x)-1, 0) // [] and ", "
		for _, item := range x {
			n += dumpsSize(item)
		}
		return n
	case *Object:
		n := 2 + 2*max(x.Len()-1, 0) // {} and ", "
		for i := 0; i < x.Len(); i++ {
			k, item := x.At(i)
			n += len(k) + 4 + dumpsSize(item) // "k": v
		}
		return n
	}
	return 0
}
