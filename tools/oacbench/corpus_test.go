package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBuildCorpusIsDeterministic(t *testing.T) {
	a, b := buildCorpus(1), buildCorpus(1)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two corpora from seed 1 differ")
	}
	if c := buildCorpus(2); bytes.Equal(a.meta[0], c.meta[0]) {
		t.Error("seeds 1 and 2 give the same base metadata")
	}
}

func TestBuildCorpusSizes(t *testing.T) {
	c := buildCorpus(1)
	if got := len(c.templates); got != 1000 {
		t.Errorf("templates = %d, want 1000", got)
	}
	if got := c.metaBytes(); got < 600_000 || got > 800_000 {
		t.Errorf("metadata = %d bytes, want about 700 KB", got)
	}
	if got := c.oacCount(); got < 80 || got > 120 {
		t.Errorf(".oac files = %d, want about 10%% of 1000", got)
	}
	dirs := map[string]bool{}
	for _, tp := range c.templates {
		dirs[strings.Split(tp.path, "/")[1]] = true
	}
	if len(dirs) < 45 || len(dirs) > 55 {
		t.Errorf("service dirs = %d, want about 50", len(dirs))
	}
}

// The three layers must be valid JSON objects that overlap, or the deep
// merge is not exercised.
func TestMetadataLayersOverlap(t *testing.T) {
	c := buildCorpus(1)
	var layers [3]map[string]any
	for i, m := range c.meta {
		if err := json.Unmarshal(m, &layers[i]); err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
	}
	for i := 1; i < 3; i++ {
		nova, ok := layers[i]["nova"].(map[string]any)
		if !ok {
			t.Fatalf("layer %d has no nova object", i)
		}
		if _, ok := layers[0]["nova"].(map[string]any)["opts"]; !ok {
			t.Fatal("base layer has no nova.opts")
		}
		if _, ok := nova["opts"]; !ok {
			t.Errorf("layer %d does not override nova.opts", i)
		}
	}
}

// The modified copy of layer 3 must differ from it in the changed service
// only, so the steady case touches that service's files alone.
func TestModifiedLayerChangesOneService(t *testing.T) {
	c := buildCorpus(1)
	var orig, mod map[string]any
	if err := json.Unmarshal(c.meta[2], &orig); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(c.modified, &mod); err != nil {
		t.Fatal(err)
	}
	if len(orig) != len(mod) {
		t.Fatalf("key count %d vs %d", len(orig), len(mod))
	}
	for k, v := range orig {
		same := reflect.DeepEqual(v, mod[k])
		if k == c.changed && same {
			t.Errorf("changed service %s is unchanged", k)
		}
		if k != c.changed && !same {
			t.Errorf("service %s changed too", k)
		}
	}
}

func TestCorpusWrite(t *testing.T) {
	c := buildCorpus(1)
	p, err := c.write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.meta) != 3 || len(p.modified) != 3 || p.modified[2] == p.meta[2] {
		t.Fatalf("bad metadata paths: %+v", p)
	}
	info, err := os.Stat(filepath.Join(p.templates, "etc/nova/nova.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o111 != 0 {
		t.Error("template is executable: the reference would run it as a script")
	}
	oac, err := os.ReadFile(filepath.Join(p.templates, "etc/nova/secrets.conf.oac"))
	if err != nil || !strings.Contains(string(oac), "mode: 06") {
		t.Errorf("secrets.conf.oac = %q, %v", oac, err)
	}
}

func TestEncodeJSONMatchesPython(t *testing.T) {
	v := object{
		{"s", "a<b>&\"é😀"},
		{"f", json.Number("16.0")},
		{"l", []any{1, true, nil}},
		{"e", object{}},
	}
	// What Python's json.dumps(v, indent=1) prints.
	want := "{\n \"s\": \"a<b>&\\\"\\u00e9\\ud83d\\ude00\",\n \"f\": 16.0,\n" +
		" \"l\": [\n  1,\n  true,\n  null\n ],\n \"e\": {}\n}\n"
	if got := string(encodeJSON(v)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
