package jsondoc

import (
	"bufio"
	"fmt"
	"strings"
	"sync"
	"testing"
)

var streamCases = []string{
	`{}`, `[]`, `null`, `"é\u2603\ud83d\ude00\n\"\\"`, `1.0e5`, `[1, 2.5, true, false, null, "x"]`,
	`{"a": {"b": [1, {"c": {}}], "d": []}, "e": "f"}`,
	`{"k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k1": "again"}`,
}

// WriteIndent writes what DumpsIndent returns, byte for byte, through a
// buffer smaller than the text.
func TestWriteIndentIsDumpsIndent(t *testing.T) {
	for _, in := range streamCases {
		v, err := Loads([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var b strings.Builder
		if err := WriteIndent(bufio.NewWriterSize(&b, 16), v, 1); err != nil {
			t.Fatal(err)
		}
		if want := DumpsIndent(v, 1); b.String() != want {
			t.Errorf("%s:\nWriteIndent %q\nDumpsIndent %q", in, b.String(), want)
		}
	}
}

// LoadsOwned decodes as Loads does; its strings share the input's bytes.
func TestLoadsOwnedIsLoads(t *testing.T) {
	for _, in := range streamCases {
		a, errA := Loads([]byte(in))
		b, errB := LoadsOwned([]byte(in))
		if errA != nil || errB != nil || Dumps(a) != Dumps(b) {
			t.Errorf("%s: Loads %s (%v), LoadsOwned %s (%v)", in, Dumps(a), errA, Dumps(b), errB)
		}
	}
	if _, err := LoadsOwned([]byte(`{"a": `)); err == nil {
		t.Error("LoadsOwned took a truncated document")
	}
}

// A large object (more than smallObject keys) decodes a key given twice
// as Python does, first place and last value, and gets its index on the
// first lookup; later Sets keep it right.
func TestLargeObjectKeys(t *testing.T) {
	var parts []string
	for i := range 20 {
		parts = append(parts, fmt.Sprintf(`"k%d": %d`, i, i))
	}
	parts = append(parts, `"k3": "last"`)
	v, err := Loads([]byte("{" + strings.Join(parts, ", ") + "}"))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*Object)
	if o.Len() != 20 || o.Keys()[3] != "k3" {
		t.Fatalf("keys %v", o.Keys())
	}
	if o.index.Load() != nil {
		t.Fatal("decoding built the index")
	}
	if got, _ := o.Get("k3"); got != "last" {
		t.Fatalf("k3 = %v", got)
	}
	o.Set("new", true)
	o.Set("k5", "five")
	if got, ok := o.Get("new"); !ok || got != true || o.Len() != 21 {
		t.Fatalf("new = %v %v, len %d", got, ok, o.Len())
	}
	if got, _ := o.Get("k5"); got != "five" || o.Keys()[5] != "k5" {
		t.Fatalf("k5 = %v at %v", got, o.Keys())
	}
	if _, ok := o.Get("missing"); ok {
		t.Fatal("found a missing key")
	}
}

// Readers may look keys up in one large object concurrently (run under
// -race): the index is built once, atomically.
func TestLargeObjectConcurrentLookups(t *testing.T) {
	o := NewObject(0)
	for i := range 50 {
		o.Set(fmt.Sprintf("k%d", i), Int(int64(i)))
	}
	v, _ := Loads([]byte(Dumps(o)))
	o = v.(*Object)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, _ := o.Get(fmt.Sprintf("k%d", g)); got.(Number).Text != fmt.Sprint(g) {
				t.Errorf("k%d = %v", g, got)
			}
		}()
	}
	wg.Wait()
}
