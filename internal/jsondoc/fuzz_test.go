package jsondoc

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// jsonSeeds are documents that reach each branch of the decoder and the
// encoder; the inputs of python-golden.jsonl are added to them.
var jsonSeeds = []string{
	`{"a": 1, "b": [true, false, null], "c": {"d": "e"}}`,
	`{"k": 1, "k": 2, "j": 3}`,
	`[1, -0, 0.0, -0.0, 1e400, -1e400, 1e-400, NaN, Infinity, -Infinity]`,
	`123456789012345678901234567890`,
	`"\u00e9\ud83d\ude00\ud800x\n\t\"\\\/\b\f\r"`,
	"\"caf\u00e9 \U0001F600\x7f\"",
	` { "nested" : [ [ [ { } ] ] ] , "e": [] } `,
	`{"a" 1}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `-`, `"\x"`, `"\u12"`, "\"a\x01\"", `[1] x`, "\xff",
	`1.5e+03`, `-12.5E-3`, `0.1`, `1E2`, `5e-324`, `1.7976931348623157e308`,
}

func seedJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	fh, err := os.Open("testdata/python-golden.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var c struct{ In string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(c.In))
	}
}

// A document that loads is written back by every encoder as text that
// loads to the same value, in the same key order; Dumps is ASCII and a
// fixed point, and LoadsBytesLazy writes it alike. A document that does
// not load is a one-line error. With FUZZ_REFERENCE=1 each input is also
// compared with Python's json.
func FuzzLoads(f *testing.F) {
	seedJSON(f)
	ref := difftest.FuzzReference(f, "testdata/oracle.py", "json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if ref != nil {
			checkLoads(t, ref, data)
		}
		v, err := Loads(data)
		if _, lerr := LoadsBytesLazy(append([]byte(nil), data...)); (err == nil) != (lerr == nil) {
			t.Fatalf("Loads: %v; LoadsBytesLazy: %v", err, lerr)
		}
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || msg == "" {
				t.Fatalf("error is not one line: %q", msg)
			}
			if msg := PythonError(err); strings.ContainsAny(msg, "\n\r") || msg == "" {
				t.Fatalf("Python's error is not one line: %q", msg)
			}
			return
		}
		dumped := Dumps(v)
		if lazy, err := LoadsBytesLazy(append([]byte(nil), data...)); err != nil || Dumps(lazy) != dumped ||
			DumpsIndent(lazy, 1) != DumpsIndent(v, 1) {
			t.Fatalf("LoadsBytesLazy differs from Loads (%v)", err)
		}
		for i := 0; i < len(dumped); i++ {
			if dumped[i] >= utf8.RuneSelf || dumped[i] < 0x20 {
				t.Fatalf("Dumps wrote byte %#x: %q", dumped[i], dumped)
			}
		}
		again := mustLoad(t, "Dumps", dumped)
		if got := Dumps(again); got != dumped {
			t.Fatalf("Dumps is not a fixed point:\n%s\n%s", dumped, got)
		}
		if !Equal(v, again) {
			t.Fatalf("Dumps changed the value: %s", dumped)
		}
		for _, n := range []int{0, 2} {
			if got := Dumps(mustLoad(t, "DumpsIndent", DumpsIndent(v, n))); got != dumped {
				t.Fatalf("DumpsIndent(%d) read back differs:\n%s\n%s", n, dumped, got)
			}
		}
		sorted := DumpsIndentSorted(v, 4)
		back := mustLoad(t, "DumpsIndentSorted", sorted)
		if !Equal(v, back) || DumpsIndentSorted(back, 4) != sorted {
			t.Fatalf("DumpsIndentSorted read back differs:\n%s", sorted)
		}
		_, _ = PyRepr(v), PyStr(v)
	})
}

func mustLoad(t *testing.T, what, text string) Value {
	t.Helper()
	v, err := Loads([]byte(text))
	if err != nil {
		t.Fatalf("%s wrote what Loads refuses (%v):\n%s", what, err, text)
	}
	return v
}

// Python's json module over the seeds (checkLoads).
func TestLoadsSeedsAgainstPython(t *testing.T) {
	ref := difftest.StartReference(t, "testdata/oracle.py", "json")
	n := 0
	for _, s := range jsonSeeds {
		n += checkLoads(t, ref, []byte(s))
	}
	for _, vals := range difftest.FuzzCorpus(t, "FuzzLoads") {
		n += checkLoads(t, ref, vals[0].([]byte))
	}
	t.Logf("%d inputs compared", n)
}

// checkLoads loads data here and with Python's json, as the reference
// reads a file (UTF-8 text, then json.loads): the same json.dumps, or
// the same error words. Text that is not UTF-8 is ours to refuse. It
// returns 0 for a known difference (see testdata/oracle.py), else 1.
func checkLoads(t *testing.T, ref *difftest.Reference, data []byte) int {
	t.Helper()
	v, err := Loads(data)
	if !utf8.Valid(data) {
		if err == nil {
			t.Errorf("%q: not UTF-8 but loaded", data)
		}
		return 1
	}
	var want struct {
		Dumps *string
		Error string
		Skip  string
	}
	if !ref.Query(t, map[string]string{"text": string(data)}, &want) || want.Skip != "" {
		return 0
	}
	switch {
	case want.Dumps != nil && err != nil:
		t.Errorf("%q: refused (%v), Python loads it", data, err)
	case want.Dumps != nil && Dumps(v) != *want.Dumps:
		t.Errorf("%q:\nours   %s\nPython %s", data, Dumps(v), *want.Dumps)
	case want.Dumps == nil && err == nil:
		t.Errorf("%q: loaded, Python refuses it: %s", data, want.Error)
	case want.Dumps == nil && PythonError(err) != want.Error:
		t.Errorf("%q: error\nours   %s\nPython %s", data, PythonError(err), want.Error)
	}
	return 1
}
