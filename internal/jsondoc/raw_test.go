package jsondoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// A Raw is written, compared and printed as the tree Loads makes of the
// same bytes; a document with a repeated key, and one that does not
// load, take the tree's way, errors and all.
func TestRawAsTree(t *testing.T) {
	docs := append([]string{
		`{"a": {"x": 1, "x": 2}}`, `[{"k": 1}, {"k": 1}]`,
		`{"a": "\u0061", "\u0061": 2}`, // the same key, spelt twice
		`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"3":0}`,
		`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"10":10,"11":{"a":[]}}`,
		"\t[ {} , [ ] , \"\" ,-0, 1.0e2, 1E400 ]\n", `{"a":[1,2,{"b":null}]}`, ` "s" `, `7`,
	}, jsonSeeds...)
	f, err := os.Open("testdata/python-golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var c struct{ In string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, c.In)
	}
	raws := 0
	for _, doc := range docs {
		tree, terr := LoadsBytes([]byte(doc))
		lazy, lerr := LoadsBytesLazy([]byte(doc))
		if (terr == nil) != (lerr == nil) || terr != nil && terr.Error() != lerr.Error() {
			t.Errorf("%q: errors %v and %v", doc, terr, lerr)
			continue
		}
		if terr != nil {
			continue
		}
		_, isRaw := lazy.(*Raw)
		if repeated := strings.Contains(doc, `"x": 1, "x"`) || strings.Contains(doc, `"\u0061"`) ||
			strings.Contains(doc, `"3":0`) || strings.Contains(doc, `"k": 1, "k"`) ||
			strings.Contains(doc, `"a": 2, "b"`); isRaw == repeated {
			t.Errorf("%q: Raw %v", doc, isRaw)
		}
		if isRaw {
			raws++
		}
		for _, n := range []int{-1, 0, 1, 4} {
			want, got := DumpsIndent(tree, n), DumpsIndent(lazy, n)
			if n < 0 {
				want, got = Dumps(tree), Dumps(lazy)
			}
			if got != want {
				t.Errorf("%q indent %d:\nraw  %s\ntree %s", doc, n, got, want)
			}
		}
		var buf bytes.Buffer
		if err := WriteIndent(bufio.NewWriter(&buf), lazy, 1); err != nil || buf.String() != DumpsIndent(tree, 1) {
			t.Errorf("%q: WriteIndent %q, %v", doc, buf.String(), err)
		}
		if !Equal(lazy, tree) || !Equal(tree, lazy) || PyRepr(lazy) != PyRepr(tree) || PyStr(lazy) != PyStr(tree) ||
			PyTruthy(lazy) != PyTruthy(tree) || DumpsIndentSorted(lazy, 2) != DumpsIndentSorted(tree, 2) {
			t.Errorf("%q: Raw and tree differ", doc)
		}
	}
	if raws < len(docs)/2 {
		t.Errorf("only %d of %d documents kept Raw", raws, len(docs))
	}
}

// Deep nesting past MaxDepth is refused as Loads refuses it.
func TestRawTooDeep(t *testing.T) {
	doc := []byte(strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2))
	_, terr := LoadsBytes(doc)
	_, lerr := LoadsBytesLazy(doc)
	if terr == nil || lerr == nil || terr.Error() != lerr.Error() {
		t.Errorf("errors %v and %v", terr, lerr)
	}
}

// LoadsOwnedLazy keeps a deployment's config (a member at a depth) as a
// Raw and reads everything else as Loads; its documents and errors are
// Loads' own.
func TestLoadsOwnedLazy(t *testing.T) {
	docs := append([]string{`{"x": 1, "x": 2}`, `[1, {"a": []}]`, `"s"`, `null`, `{"a" 1}`, `[1,`}, jsonSeeds...)
	for _, doc := range docs {
		for _, wrap := range []string{`[{"id": "1", "config": %s, "inputs": [{"config": {}}]}, {"config": 1}]`, `[{"config": %s`} {
			text := []byte(strings.Replace(wrap, "%s", doc, 1))
			tree, terr := Loads(text)
			lazy, lerr := LoadsOwnedLazy(append([]byte(nil), text...), "config", 1)
			if (terr == nil) != (lerr == nil) || terr != nil && PythonError(terr) != PythonError(lerr) {
				t.Errorf("%s: errors %v and %v", text, terr, lerr)
				continue
			}
			if terr != nil {
				continue
			}
			if Dumps(lazy) != Dumps(tree) || DumpsIndent(lazy, 2) != DumpsIndent(tree, 2) || !Equal(lazy, tree) {
				t.Errorf("%s: lazy %s", text, Dumps(lazy))
			}
			cfg, _ := lazy.([]Value)[0].(*Object).Get("config")
			_, isRaw := cfg.(*Raw)
			c := strings.TrimSpace(doc)[0]
			repeated := strings.Contains(doc, `"k": 1, "k"`) || strings.Contains(doc, `"x": 1, "x"`)
			if wantRaw := (c == '{' || c == '[') && !repeated; isRaw != wantRaw {
				t.Errorf("%s: config is %T", text, cfg)
			}
			in, _ := lazy.([]Value)[0].(*Object).Get("inputs")
			if _, ok := in.([]Value)[0].(*Object); !ok {
				t.Errorf("%s: a config deeper down was not decoded", text)
			}
		}
	}
}
