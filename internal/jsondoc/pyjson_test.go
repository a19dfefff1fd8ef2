package jsondoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// testdata/python-golden.jsonl holds, for each input, what Python 3.11's
// json.dumps, json.dumps(indent=1), repr() and str() print for
// json.loads(input). It was produced by running those functions.
func TestAgainstPythonGolden(t *testing.T) {
	f, err := os.Open("testdata/python-golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var want struct{ In, Dumps, Indent1, Repr, Str string }
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		n++
		v, err := Loads([]byte(want.In))
		if err != nil {
			t.Errorf("Loads(%s): %v", want.In, err)
			continue
		}
		if got := Dumps(v); got != want.Dumps {
			t.Errorf("Dumps(%s) = %s, want %s", want.In, got, want.Dumps)
		}
		if got := DumpsIndent(v, 1); got != want.Indent1 {
			t.Errorf("DumpsIndent(%s) = %q, want %q", want.In, got, want.Indent1)
		}
		if got := PyRepr(v); got != want.Repr {
			t.Errorf("PyRepr(%s) = %s, want %s", want.In, got, want.Repr)
		}
		if got := PyStr(v); got != want.Str {
			t.Errorf("PyStr(%s) = %s, want %s", want.In, got, want.Str)
		}
	}
	if n < 20 {
		t.Fatalf("only %d golden cases", n)
	}
}

func TestLoadsRejects(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `{"a"}`, `{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `+1`, `"a`, "\"a\x01\"",
		`"\x"`, `"\u12"`, `{'a': 1}`, `[1] [2]`, `nul`, `True`, "\xff",
	} {
		if v, err := Loads([]byte(in)); err == nil {
			t.Errorf("Loads(%q) = %v, want an error", in, v)
		}
	}
}

func TestLoneSurrogateBecomesReplacement(t *testing.T) {
	v, err := Loads([]byte(`"\ud800x"`))
	if err != nil || v != "\uFFFDx" {
		t.Fatalf("got %q, %v", v, err)
	}
}

func TestDeepNestingIsAnError(t *testing.T) {
	deep := make([]byte, 0, 2*MaxDepth+10)
	for i := 0; i < MaxDepth+5; i++ {
		deep = append(deep, '[')
	}
	if _, err := Loads(deep); err == nil {
		t.Fatal("no error for nesting beyond MaxDepth")
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a": 1, "b": [1, 2]}`, `{"b": [1, 2], "a": 1}`, true},
		{`{"a": 1}`, `{"a": 1.0}`, true},
		{`{"a": true}`, `{"a": 1}`, true},
		{`{"a": 0}`, `{"a": -0.0}`, true},
		{`{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{`{"a": null}`, `{}`, false},
		{`"1"`, `1`, false},
		{`123456789012345678901234567890`, `123456789012345678901234567891`, false},
	} {
		a, _ := Loads([]byte(tc.a))
		b, _ := Loads([]byte(tc.b))
		if got := Equal(a, b); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestReprBytesAndTuple(t *testing.T) {
	if got, want := PyReprBytes([]byte("oops\n'\x00\xff\\")), `b"oops\n'\x00\xff\\"`; got != want {
		t.Errorf("ReprBytes = %s, want %s", got, want)
	}
	if got, want := PyReprTuple("a\nb", "it's"), `('a\nb', "it's")`; got != want {
		t.Errorf("ReprTuple = %s, want %s", got, want)
	}
}

func BenchmarkLoads(b *testing.B) {
	doc := []byte(`{"nova": {"compute": {"host": "node-1", "ports": [1, 2, 3], "ratio": 1.5, "enabled": true}}, "text": "plain ascii text of some length"}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := Loads(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// Errors in Python's words, checked against Python's json module.
func TestPythonErrorWording(t *testing.T) {
	difftest.Oracle(t)
	inputs := []string{"", "   ", `{"a" 1}`, `{a}`, `[1 2]`, `"abc`, `"a\qb"`, `"a\u12"`, "\"a\x01\"", `[1]x`, "é x",
		`{"é": tru}`, "{\n \"a\": [1,\n  2,,\n]}", `{"a": 1,}`, `[`, `{"a"`, `nul`, `-`, `1.`, "\"é\\x\"",
		`"\u1000`, `"\ud800\udc00`, `"\ud800\udc00x`, `"\ud800\u12`}
	py := exec.Command("/usr/bin/python3", "-c", `
import json, sys
for s in json.load(sys.stdin):
    try:
        json.loads(s)
        print("ok")
    except json.JSONDecodeError as e:
        print(e)
`)
	in, _ := json.Marshal(inputs)
	py.Stdin = bytes.NewReader(in)
	out, err := py.Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, s := range inputs {
		_, err := Loads([]byte(s))
		if err == nil {
			t.Errorf("%q: no error, Python: %s", s, want[i])
			continue
		}
		if got := PythonError(err); got != want[i] {
			t.Errorf("%q: %s, Python: %s", s, got, want[i])
		}
	}
}
