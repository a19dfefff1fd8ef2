package jsondoc

import "testing"

func TestKindOf(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"a": 1}`, "an object"},
		{`[1]`, "a list"},
		{`"x"`, "a string"},
		{`-1.5e3`, "a number"},
		{`true`, "a boolean"},
		{`false`, "a boolean"},
		{`null`, "null"},
	} {
		for name, load := range map[string]func([]byte) (Value, error){"tree": Loads, "raw": LoadsBytesLazy} {
			v, err := load([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := KindOf(v); got != c.want {
				t.Errorf("%s %s: KindOf = %q, want %q", name, c.doc, got, c.want)
			}
		}
	}
}
