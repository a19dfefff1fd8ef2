package metadata

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/difftest"
	"github.com/tripleo-go/agent/internal/pyjson"
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
// a refused file is a one-line error naming it.
func FuzzMerge(f *testing.F) {
	addMergeSeeds(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b, c []byte, key string) {
		paths := make([]string, 3)
		var docs []*pyjson.Object
		for i, data := range [][]byte{a, b, c} {
			paths[i] = filepath.Join(dir, string(rune('a'+i))+".json")
			if err := os.WriteFile(paths[i], data, 0o600); err != nil {
				t.Fatal(err)
			}
			if v, err := pyjson.Loads(data); err == nil {
				if obj, ok := v.(*pyjson.Object); ok && obj.Len() > 0 {
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
			before[i] = pyjson.Dumps(d)
		}
		// The same merge, step by step, over the documents read apart.
		want := pyjson.NewObject(0)
		for _, d := range docs {
			checkMergeStep(t, want, d)
		}
		if got := pyjson.Dumps(merged); got != pyjson.Dumps(want) {
			t.Fatalf("Read and Merge differ:\n%s\n%s", got, pyjson.Dumps(want))
		}
		for i, d := range docs {
			if pyjson.Dumps(d) != before[i] {
				t.Fatalf("merging changed document %d:\n%s\n%s", i, before[i], pyjson.Dumps(d))
			}
		}
		again := pyjson.NewObject(0)
		Merge(again, merged)
		Merge(again, merged)
		if pyjson.Dumps(again) != pyjson.Dumps(merged) {
			t.Fatalf("merging a document with itself changed it:\n%s\n%s", pyjson.Dumps(merged), pyjson.Dumps(again))
		}
		_, _ = Lookup(merged, key)
		if _, err := Subhash(merged, key); err != nil && strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(key, "\n\r") {
			t.Fatalf("error is not one line: %q", err)
		}
	})
}

// checkMergeStep merges overlay into base and checks the result key by
// key against the rule.
func checkMergeStep(t *testing.T, base, overlay *pyjson.Object) {
	t.Helper()
	old := pyjson.NewObject(base.Len())
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
		wasObj, ok1 := was.(*pyjson.Object)
		ovObj, ok2 := ov.(*pyjson.Object)
		switch {
		case !inOverlay:
			if pyjson.Dumps(got) != pyjson.Dumps(was) {
				t.Fatalf("key %q changed without an overlay value", k)
			}
		case ok1 && ok2:
			want := pyjson.NewObject(0)
			Merge(want, wasObj)
			checkMergeStep(t, want, ovObj)
			if pyjson.Dumps(got) != pyjson.Dumps(want) {
				t.Fatalf("key %q: objects not merged: %s", k, pyjson.Dumps(got))
			}
		default:
			if pyjson.Dumps(got) != pyjson.Dumps(ov) {
				t.Fatalf("key %q: %s, want the later value %s", k, pyjson.Dumps(got), pyjson.Dumps(ov))
			}
		}
	}
}

// The reference's own collect_config and _extract_key, over the seeds:
// the same merged metadata, the same --key value, refusing the same
// files.
func TestMergeSeedsAgainstReference(t *testing.T) {
	difftest.RequirePythonModule(t, "os_apply_config.apply_config")
	type tc struct {
		docs [3][]byte
		key  string
	}
	var cases []tc
	for _, s := range mergeSeeds {
		cases = append(cases, tc{[3][]byte{[]byte(s.a), []byte(s.b), []byte(s.c)}, s.key})
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzMerge") {
		cases = append(cases, tc{[3][]byte{vals[0].([]byte), vals[1].([]byte), vals[2].([]byte)}, vals[3].(string)})
	}
	type oracleCase struct {
		Docs []string `json:"docs"`
		Key  string   `json:"key"`
	}
	var in []oracleCase
	var kept []tc
	for _, c := range cases {
		if !utf8.ValidString(c.key) || strings.ContainsRune(c.key, 0) {
			continue // not a command-line argument Python would get as text
		}
		oc := oracleCase{Key: c.key}
		for _, d := range c.docs {
			oc.Docs = append(oc.Docs, base64.StdEncoding.EncodeToString(d))
		}
		in = append(in, oc)
		kept = append(kept, c)
	}
	input, _ := json.Marshal(in)
	cmd := exec.Command(difftest.PythonPath, "testdata/oracle.py")
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = []string{"LANG=C.UTF-8", "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(kept) {
		t.Fatalf("oracle printed %d lines for %d cases", len(lines), len(kept))
	}
	dir := t.TempDir()
	compared := 0
	for i, c := range kept {
		var want struct {
			Merged, Value *string
			Error         bool
			Skip          string
		}
		if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
			t.Fatal(err)
		}
		if want.Skip != "" {
			continue
		}
		compared++
		var paths []string
		for j, d := range c.docs {
			p := filepath.Join(dir, string(rune('a'+j))+".json")
			os.WriteFile(p, d, 0o600)
			paths = append(paths, p)
		}
		label := strings.Join([]string{string(c.docs[0]), string(c.docs[1]), string(c.docs[2]), c.key}, " | ")
		merged, err := Read(paths)
		if want.Error != (err != nil) {
			t.Errorf("%q: reference refuses: %v, ours: %v", label, want.Error, err)
			continue
		}
		if err != nil {
			continue
		}
		if got := pyjson.Dumps(merged); got != *want.Merged {
			t.Errorf("%q: merged\nours      %s\nreference %s", label, got, *want.Merged)
		}
		v, ok := Lookup(merged, c.key)
		switch {
		case ok != (want.Value != nil):
			t.Errorf("%q: key found: ours %v, reference %v", label, ok, want.Value != nil)
		case ok && pyjson.Dumps(v) != *want.Value:
			t.Errorf("%q: key value\nours      %s\nreference %s", label, pyjson.Dumps(v), *want.Value)
		}
	}
	t.Logf("%d cases compared", compared)
}
