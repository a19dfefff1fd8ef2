package pyjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/difftest"
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
// fixed point. A document that does not load is a one-line error.
func FuzzLoads(f *testing.F) {
	seedJSON(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Loads(data)
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
		_, _ = Repr(v), Str(v)
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

// Python's json module, fed the seeds as the reference reads a file (a
// UTF-8 text, then json.loads), prints the same json.dumps, or the same
// error. Known differences are left out: a lone surrogate (U+FFFD here),
// nesting beyond Python's recursion limit, and integers beyond its
// 4300-digit conversion limit (both tracebacks in the reference).
func TestLoadsSeedsAgainstPython(t *testing.T) {
	difftest.RequirePythonModule(t, "json")
	inputs := append([]string(nil), jsonSeeds...)
	for _, vals := range difftest.FuzzCorpus(t, "FuzzLoads") {
		inputs = append(inputs, string(vals[0].([]byte)))
	}
	if !utf8.ValidString(strings.Join(inputs, "")) {
		// Python gets the inputs as JSON text; invalid UTF-8 is ours to
		// refuse and is checked apart.
		var valid []string
		for _, in := range inputs {
			if utf8.ValidString(in) {
				valid = append(valid, in)
			} else if _, err := Loads([]byte(in)); err == nil {
				t.Errorf("%q: not UTF-8 but loaded", in)
			}
		}
		inputs = valid
	}
	py := exec.Command(difftest.PythonPath, "-c", `
import json, sys
for s in json.load(sys.stdin):
    try:
        out = json.dumps(json.loads(s))
        try:
            json.dumps(json.loads(s), ensure_ascii=False).encode("utf-8")
            print("OK " + out)
        except UnicodeEncodeError:
            print("SKIP lone surrogate")
    except (RecursionError, ValueError) as e:
        if isinstance(e, RecursionError) or not isinstance(e, json.JSONDecodeError):
            print("SKIP " + type(e).__name__)
        else:
            print("ERR " + str(e))
`)
	in, _ := json.Marshal(inputs)
	py.Stdin = bytes.NewReader(in)
	out, err := py.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(inputs) {
		t.Fatalf("python printed %d lines for %d inputs", len(want), len(inputs))
	}
	t.Logf("%d inputs compared", len(inputs))
	for i, s := range inputs {
		kind, text, _ := strings.Cut(want[i], " ")
		v, err := Loads([]byte(s))
		switch {
		case kind == "SKIP":
		case kind == "OK" && err != nil:
			t.Errorf("%q: refused (%v), Python loads it", s, err)
		case kind == "OK" && Dumps(v) != text:
			t.Errorf("%q:\nours   %s\nPython %s", s, Dumps(v), text)
		case kind == "ERR" && err == nil:
			t.Errorf("%q: loaded, Python refuses it: %s", s, text)
		case kind == "ERR" && PythonError(err) != text:
			t.Errorf("%q: error\nours   %s\nPython %s", s, PythonError(err), text)
		}
	}
}
