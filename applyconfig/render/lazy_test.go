package render

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// lazyTemplates add, to the seeds, the ways a template reaches the top
// level: the whole of it, names from within sections, a dotted name's
// first part, the "a." and ".a" forms, names the metadata lacks.
var lazyTemplates = []string{
	"{{.}}", "[{{#.}}{{x}}{{/.}}]", "{{d.}}|{{.d}}|{{.}}|{{..x}}", "{{#d}}{{.}}{{/d}}", "{{#items}}{{.}}|{{top}}|{{x}}{{/items}}",
	"{{#d}}{{#y}}{{z}}{{top}}{{x}}{{/y}}{{/d}}", "{{#l}}x{{/l}}{{^e}}none{{/e}}{{^nope}}no{{/nope}}", "{{e}}{{l}}{{nums}}",
	"{{#items}}{{#name}}{{d.y.z}}{{/name}}{{/items}}", "{{String}}{{#d}}{{Format}}{{String}}{{/d}}", "{{#t}}{{#one}}{{big}}{{/one}}{{/t}}",
	"{{=<% %>=}}<%d.x%><%#items%><%name%><%/items%>", "{{>p}}{{x}}", "{{#x}}{{x}}{{/x}}{{^x}}{{/x}}",
}

// lazyMetadata is fuzzMetadata read as a big file is: its top-level
// containers kept as bytes until a template names them.
func lazyMetadata(t testing.TB, meta []byte) *Metadata {
	var v jsondoc.Value
	if lv, err := jsondoc.LoadsMembersLazy(append([]byte(nil), meta...)); err == nil {
		if _, ok := lv.(*jsondoc.Object); ok {
			v = lv
		}
	}
	if v == nil {
		lv, err := jsondoc.LoadsMembersLazy([]byte(fixture))
		if err != nil {
			t.Fatal(err)
		}
		v = lv
	}
	return NewMetadata(v)
}

// A view made as templates look into the metadata renders every
// template, and refuses every one, as the whole view does.
func TestLazyViewRendersAsWhole(t *testing.T) {
	type pair struct{ tmpl, meta []byte }
	var cases []pair
	for _, s := range mustacheSeeds {
		cases = append(cases, pair{[]byte(s.tmpl), []byte(s.meta)})
	}
	for _, tmpl := range lazyTemplates {
		cases = append(cases, pair{[]byte(tmpl), nil})
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzMustache") {
		cases = append(cases, pair{vals[0].([]byte), vals[1].([]byte)})
	}
	lazies := 0
	for _, c := range cases {
		eager, lazy := NewMetadata(fuzzMetadata(c.meta)), lazyMetadata(t, c.meta)
		if lazy.lazy != nil {
			lazies++
		}
		want, werr := eager.Mustache(c.tmpl)
		for range 2 { // a second render finds the views made
			got, err := lazy.Mustache(c.tmpl)
			if fmt.Sprint(err) != fmt.Sprint(werr) || string(got) != string(want) {
				t.Errorf("template %q over %q:\nlazy  %q, %v\nwhole %q, %v", c.tmpl, c.meta, got, err, want, werr)
			}
		}
	}
	if lazies < len(cases)/2 {
		t.Errorf("only %d of %d cases had a lazy view", lazies, len(cases))
	}
}

// Metadata merged from big files holds objects whose members are bytes
// still; they render as their trees do.
func TestLazyViewOfMergedObjects(t *testing.T) {
	doc := `{"m": {"a": {"b": 1, "é": [2.50, {"c": null}]}, "l": [1, "two"], "s": "x"}, "n": {"k": {}}}`
	lv, err := jsondoc.LoadsMembersLazy([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	top := lv.(*jsondoc.Object)
	m, _ := top.Get("m")
	top.Set("m", m.(*jsondoc.Raw).Members()) // an object of Raw members, as Merge leaves one
	tree, _ := jsondoc.Loads([]byte(doc))
	eager, lazy := NewMetadata(tree), NewMetadata(top)
	if lazy.lazy == nil {
		t.Fatal("the view is not lazy")
	}
	for _, tmpl := range []string{"{{m}}", "{{m.a}}", "{{m.a.b}}{{#m.l}}<{{.}}>{{/m.l}}", "{{#m}}{{#a}}{{é}}{{/a}}{{s}}{{/m}}", "{{.}}", "{{n.k}}{{#n}}{{k}}{{/n}}"} {
		want, werr := eager.Mustache([]byte(tmpl))
		got, err := lazy.Mustache([]byte(tmpl))
		if werr != nil || err != nil || string(got) != string(want) {
			t.Errorf("%s: lazy %q, %v; whole %q, %v", tmpl, got, err, want, werr)
		}
	}
}

// Templates rendered at once make each key's view once, and agree.
func TestLazyViewConcurrent(t *testing.T) {
	m := lazyMetadata(t, nil)
	want, err := NewMetadata(fuzzMetadata(nil)).Mustache([]byte(lazyTemplates[4] + lazyTemplates[0]))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, tmpl := range append(lazyTemplates, lazyTemplates[4]+lazyTemplates[0]) {
				got, err := m.Mustache([]byte(tmpl))
				if tmpl == lazyTemplates[4]+lazyTemplates[0] && (err != nil || string(got) != string(want)) {
					t.Errorf("%q, %v; want %q", got, err, want)
				}
			}
		})
	}
	wg.Wait()
}
