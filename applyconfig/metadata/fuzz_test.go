package metadata

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// mergeSeeds are three metadata files and a --key each: the merge's
// cases (deep, replaced, null, lists, non-objects, duplicates) and the
// lookup's (list indexes as Python's int() reads them, null steps).
var mergeSeeds = []struct{ a, b, c, key string }{
	{`{"a": 1}`, `{"b": 2}`, `{"a": 3}`, "a"},
	{`{"d": {"y": {"z": 1}, "k": 0}}`, `{"d": {"y": {"w": 2}}}`, `{"d": {"k": null}}`, "d.y.w"},
	{`{"d": {"x": 1}}`, `{"d": 5}`, `{"d": {"x": 2}}`, "d.x"},
	{`{"l": [1, "two", {"t": 3}]}`, `[1, 2]`, `{"m": {}}`, "l.-1.t"},
	{`{"a": {"b": [10, {"c": "deep"}, null]}}`, `null`, `"s"`, "a.b. +1 .c"},
	{`{"k": 1, "k": {"x": 1}}`, `{"k": {"y": 2}, "k": {"z": 3}}`, `{}`, "k.z"},
	{`{"a": {"b": {"c": {}}}}`, `{"a": {"b": {"c": {"d": true}}}}`, `{"a": {"b": []}}`, "a.b"},
	{`{"": {"": 1}}`, `{"x.y": 2}`, `{"n": null}`, "."},
	{`{"a": [[1, 2], [3]]}`, `{"b": 1e400}`, `{"c": -0.0}`, "a.1_0"},
	{`{"a": 1`, `{}`, `{}`, "a"},
	{"{\"a\": \"\xff\"}", `{}`, `{}`, "a"},
	{`{"é": {"ü": "\u00fc\ud83d\ude00"}}`, `{"é": {"x": 1}}`, ``, "é.ü"},
}

func addMergeSeeds(f *testing.F) {
	for _, s := range mergeSeeds {
		f.Add([]byte(s.a), []byte(s.b), []byte(s.c), s.key)
	}
}

// FuzzMerge reads three metadata files as os-apply-config does and looks
// a key up in the result. The merge keeps every key, in Python's order
// (the earlier files' first), takes a later value unless both are
// objects, is idempotent, and changes none of the documents it merged;
// a refused file is a one-line error naming it. With FUZZ_REFERENCE=1
// each input is also compared with the reference (checkMerge).
func FuzzMerge(f *testing.F) {
	addMergeSeeds(f)
	dir := f.TempDir()
	ref := difftest.FuzzReference(f, "testdata/oracle.py", "os_apply_config.apply_config")
	f.Fuzz(func(t *testing.T, a, b, c []byte, key string) {
		if ref != nil {
			checkMerge(t, ref, dir, [3][]byte{a, b, c}, key)
		}
		paths := make([]string, 3)
		var docs []*jsondoc.Object
		for i, data := range [][]byte{a, b, c} {
			paths[i] = filepath.Join(dir, string(rune('a'+i))+".json")
			if err := os.WriteFile(paths[i], data, 0o600); err != nil {
				t.Fatal(err)
			}
			if v, err := jsondoc.Loads(data); err == nil {
				if obj, ok := v.(*jsondoc.Object); ok && obj.Len() > 0 {
					docs = append(docs, obj)
				}
			}
		}
		merged, err := Read(paths)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, dir) {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			return
		}
		before := make([]string, len(docs))
		for i, d := range docs {
			before[i] = jsondoc.Dumps(d)
		}
		// The same merge, step by step, over the documents read apart.
		want := jsondoc.NewObject(0)
		for _, d := range docs {
			checkMergeStep(t, want, d)
		}
		if got := jsondoc.Dumps(merged); got != jsondoc.Dumps(want) {
			t.Fatalf("Read and Merge differ:\n%s\n%s", got, jsondoc.Dumps(want))
		}
		for i, d := range docs {
			if jsondoc.Dumps(d) != before[i] {
				t.Fatalf("merging changed document %d:\n%s\n%s", i, before[i], jsondoc.Dumps(d))
			}
		}
		again := jsondoc.NewObject(0)
		Merge(again, merged)
		Merge(again, merged)
		if jsondoc.Dumps(again) != jsondoc.Dumps(merged) {
			t.Fatalf("merging a document with itself changed it:\n%s\n%s", jsondoc.Dumps(merged), jsondoc.Dumps(again))
		}
		_, _ = Lookup(merged, key)
		if _, err := Subhash(merged, key); err != nil && strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(key, "\n\r") {
			t.Fatalf("error is not one line: %q", err)
		}
	})
}

// checkMergeStep merges overlay into base and checks the result key by
// key against the rule.
func checkMergeStep(t *testing.T, base, overlay *jsondoc.Object) {
	t.Helper()
	old := jsondoc.NewObject(base.Len())
	for i := 0; i < base.Len(); i++ {
		old.Set(base.At(i))
	}
	Merge(base, overlay)
	var wantKeys []string
	wantKeys = append(wantKeys, old.Keys()...)
	for _, k := range overlay.Keys() {
		if _, ok := old.Get(k); !ok {
			wantKeys = append(wantKeys, k)
		}
	}
	if strings.Join(base.Keys(), "\x00") != strings.Join(wantKeys, "\x00") {
		t.Fatalf("keys %q, want %q", base.Keys(), wantKeys)
	}
	for _, k := range base.Keys() {
		got, _ := base.Get(k)
		ov, inOverlay := overlay.Get(k)
		was, _ := old.Get(k)
		wasObj, ok1 := was.(*jsondoc.Object)
		ovObj, ok2 := ov.(*jsondoc.Object)
		switch {
		case !inOverlay:
			if jsondoc.Dumps(got) != jsondoc.Dumps(was) {
				t.Fatalf("key %q changed without an overlay value", k)
			}
		case ok1 && ok2:
			want := jsondoc.NewObject(0)
			Merge(want, wasObj)
			checkMergeStep(t, want, ovObj)
			if jsondoc.Dumps(got) != jsondoc.Dumps(want) {
				t.Fatalf("key %q: objects not merged: %s", k, jsondoc.Dumps(got))
			}
		default:
			if jsondoc.Dumps(got) != jsondoc.Dumps(ov) {
				t.Fatalf("key %q: %s, want the later value %s", k, jsondoc.Dumps(got), jsondoc.Dumps(ov))
			}
		}
	}
}

// The reference's own collect_config and _extract_key, over the seeds
// (checkMerge).
func TestMergeSeedsAgainstReference(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/oracle.py", "os_apply_config.apply_config")
	dir := t.TempDir()
	n := 0
	for _, s := range mergeSeeds {
		n += checkMerge(t, ref, dir, [3][]byte{[]byte(s.a), []byte(s.b), []byte(s.c)}, s.key)
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzMerge") {
		n += checkMerge(t, ref, dir, [3][]byte{vals[0].([]byte), vals[1].([]byte), vals[2].([]byte)}, vals[3].(string))
	}
	t.Logf("%d cases compared", n)
}

// checkMerge reads docs as metadata files and looks key up, here and in
// the reference: the same merged metadata, the same --key value,
// refusing the same files. It returns 0 when the case is not compared (a
// known difference, or a key that is not text), else 1.
func checkMerge(t *testing.T, ref *difftest.Reference, dir string, docs [3][]byte, key string) int {
	t.Helper()
	if !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
		return 0 // not a command-line argument Python would get as text
	}
	in := struct {
		Docs []string `json:"docs"`
		Key  string   `json:"key"`
	}{Key: key}
	var paths []string
	for j, d := range docs {
		in.Docs = append(in.Docs, base64.StdEncoding.EncodeToString(d))
		p := filepath.Join(dir, string(rune('a'+j))+".json")
		if err := os.WriteFile(p, d, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var want struct {
		Merged, Value *string
		Error         bool
		Skip          string
	}
	if !ref.Query(t, in, &want) || want.Skip != "" {
		return 0
	}
	label := fmt.Sprintf("%q", []string{string(docs[0]), string(docs[1]), string(docs[2]), key})
	merged, err := Read(paths)
	switch {
	case want.Error != (err != nil):
		t.Errorf("%s: reference refuses: %v, ours: %v", label, want.Error, err)
	case err != nil:
	case jsondoc.Dumps(merged) != *want.Merged:
		t.Errorf("%s: merged\nours      %s\nreference %s", label, jsondoc.Dumps(merged), *want.Merged)
	default:
		v, ok := Lookup(merged, key)
		switch {
		case ok != (want.Value != nil):
			t.Errorf("%s: key found: ours %v, reference %v", label, ok, want.Value != nil)
		case ok && jsondoc.Dumps(v) != *want.Value:
			t.Errorf("%s: key value\nours      %s\nreference %s", label, jsondoc.Dumps(v), *want.Value)
		}
	}
	return 1
}
