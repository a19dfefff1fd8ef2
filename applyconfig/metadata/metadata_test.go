package metadata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Cases follow os_apply_config/tests/test_collect_config.py.
func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"no conflict", []string{`{"a": 1}`, `{"b": 2}`}, `{"a": 1, "b": 2}`},
		{"later scalar wins", []string{`{"a": 1, "b": 2}`, `{"a": 3}`}, `{"a": 3, "b": 2}`},
		{"deep", []string{`{"d": {"y": {"z": 1}, "k": 0}}`, `{"d": {"y": {"w": 2}}}`}, `{"d": {"y": {"z": 1, "w": 2}, "k": 0}}`},
		{"dict replaced by scalar", []string{`{"d": {"x": 1}}`, `{"d": 5}`}, `{"d": 5}`},
		{"scalar replaced by dict", []string{`{"d": 5}`, `{"d": {"x": 1}}`}, `{"d": {"x": 1}}`},
		{"nested type conflict", []string{`{"a": {"b": {"c": 1}}}`, `{"a": {"b": [1]}}`}, `{"a": {"b": [1]}}`},
		{"lists replaced", []string{`{"l": [1, "two", 3]}`, `{"l": ["replaced"]}`}, `{"l": ["replaced"]}`},
		{"null overwrites", []string{`{"a": 1}`, `{"a": null}`}, `{"a": null}`},
		{"non-dicts and {} ignored", []string{`{"a": 1}`, `[1, 2]`, `"s"`, `{}`, `null`}, `{"a": 1}`},
		// Read merges into the first file's tree in place: order and
		// rules as when it merged into a copy.
		{"three files, order kept", []string{`{"d": {"x": 1, "y": {}}, "e": {"q": 1}}`, `{"e": {"r": 2}, "d": {"y": {"w": 1}, "z": 3}}`, `{"d": {"y": {"v": 2, "w": 4}, "x": 5}, "f": 6}`},
			`{"d": {"x": 5, "y": {"w": 4, "v": 2}, "z": 3}, "e": {"q": 1, "r": 2}, "f": 6}`},
		{"non-dict first", []string{`[1]`, `{"d": {"x": 1}}`, `{"d": {"y": 2}}`}, `{"d": {"x": 1, "y": 2}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for i, body := range tc.files {
				paths = append(paths, write(t, dir, string(rune('a'+i))+".json", body))
			}
			got, err := Read(append([]string{"", filepath.Join(dir, "missing.json")}, paths...))
			if err != nil {
				t.Fatal(err)
			}
			if s := jsondoc.Dumps(got); s != tc.want {
				t.Fatalf("got %s, want %s", s, tc.want)
			}
		})
	}
}

func TestReadErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.json", `{"a": `)
	_, err := Read([]string{bad})
	if err == nil || !strings.HasPrefix(err.Error(), "Could not parse metadata file: "+bad) {
		t.Fatalf("error %v", err)
	}
	_, err = Read([]string{dir})
	want := "Could not open " + dir + " for reading. [Errno 21] Is a directory: '" + dir + "'"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

func TestLookupAndSubhash(t *testing.T) {
	v, _ := jsondoc.Loads([]byte(`{"a": {"b": [10, {"c": "deep"}, null]}, "n": null, "s": "str"}`))
	cfg := v.(*jsondoc.Object)
	for key, want := range map[string]string{
		"a.b.0": "10", "a.b.1.c": "deep", "a.b.-1": "", "a.b.-3": "10", "a.b.3": "", "n": "", "s.x": "",
		"a.b. 0": "10", "a.b.+1.c": "deep", "a.b.x": "", "missing": "",
	} {
		got, ok := Lookup(cfg, key)
		if (want == "") != !ok || (ok && jsondoc.PyStr(got) != want) {
			t.Errorf("Lookup(%s) = %v, %v; want %q", key, got, ok, want)
		}
	}
	if _, err := Subhash(cfg, "a.b"); err == nil || err.Error() != "key 'a.b' does not correspond to a hash in the metadata file" {
		t.Errorf("Subhash error %v", err)
	}
	if sub, err := Subhash(cfg, "a"); err != nil || sub.Len() != 1 {
		t.Errorf("Subhash(a) = %v, %v", sub, err)
	}
}

func BenchmarkMerge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < 200; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(`"svc` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `": {"host": "h", "port": 1, "opts": {"a": [1, 2], "b": true}}`)
	}
	sb.WriteString("}")
	v1, _ := jsondoc.Loads([]byte(sb.String()))
	v2, _ := jsondoc.Loads([]byte(sb.String()))
	b.ResetTimer()
	for b.Loop() {
		base := jsondoc.NewObject(0)
		Merge(base, v1.(*jsondoc.Object))
		Merge(base, v2.(*jsondoc.Object))
	}
}
