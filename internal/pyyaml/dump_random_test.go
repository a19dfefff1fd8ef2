package pyyaml

import (
	"encoding/json"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Against PyYAML itself, on random documents (without -short; skipped
// when python3's yaml is missing).
func TestSafeDumpAgainstPyYAML(t *testing.T) {
	if testing.Short() {
		t.Skip("runs python3")
	}
	if exec.Command("python3", "-c", "import yaml").Run() != nil {
		t.Skip("python3 with yaml is not installed")
	}
	r := rand.New(rand.NewSource(1))
	var docs []string
	for range 3000 {
		docs = append(docs, jsondoc.Dumps(randomValue(r, 0)))
	}
	in, _ := json.Marshal(docs)
	cmd := exec.Command("python3", "-c", `import json, sys, yaml
docs = json.load(sys.stdin)
json.dump([yaml.safe_dump(json.loads(d)) for d in docs], sys.stdout)`)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, d := range docs {
		if got := Dump(load(t, d)); got != want[i] {
			t.Errorf("%s\n got %q\nwant %q", d, got, want[i])
			if bad++; bad > 5 {
				t.FailNow()
			}
		}
	}
}

var pieces = []string{"a", "b c", " ", "  ", "\n", "'", "\"", ":", ": ", "#", " #", "-", "- ", "?", "{", "[", ",", "\t", "\\",
	"é", "€", "\U0001F600", "\u2028", "\x85", "\x00", "true", "1", "0.5", "~", "null", "---", "...", "10:20", "2001-01-01",
	"word", "longerwordhere", "x", "=", "<<", "%", "@", "!", "&", "*", "|", ">", "\r"}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	n := r.Intn(12)
	if r.Intn(10) == 0 {
		n = 20 + r.Intn(60)
	}
	for range n {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	return b.String()
}

func randomValue(r *rand.Rand, depth int) jsondoc.Value {
	k := r.Intn(10)
	if depth > 3 {
		k = r.Intn(6)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.Intn(2) == 0
	case 2:
		return jsondoc.Int(r.Int63n(2000) - 1000)
	case 3:
		return jsondoc.Float([]float64{0.5, 1e16, 1e-7, 123.456, -0.0, 3e300}[r.Intn(6)])
	case 4, 5:
		return randomString(r)
	case 6, 7:
		o := jsondoc.NewObject(4)
		for range r.Intn(5) {
			key := randomString(r)
			if r.Intn(15) == 0 {
				key = strings.Repeat("k", 118+r.Intn(10))
			}
			o.Set(key, randomValue(r, depth+1))
		}
		return o
	default:
		var l []jsondoc.Value
		for range r.Intn(5) {
			l = append(l, randomValue(r, depth+1))
		}
		if l == nil {
			l = []jsondoc.Value{}
		}
		return l
	}
}

// A salt answer of 1000 states (about 300 KB of YAML).
func BenchmarkSafeDumpStates(b *testing.B) {
	states := jsondoc.NewObject(1000)
	for i := range 1000 {
		st := jsondoc.NewObject(9)
		st.Set("name", "does_not_matter")
		st.Set("changes", map[bool]jsondoc.Value{true: nil}[true])
		st.Set("result", true)
		st.Set("comment", "State 'test.echo' was not found in SLS 'fake_stack'\nReason: 'test.echo' is not available.\n")
		st.Set("__run_num__", jsondoc.Int(int64(i)))
		st.Set("start_time", "11:40:20.123456")
		st.Set("duration", jsondoc.Float(1.234))
		states.Set("environ_|-testit_|-does_not_matter_|-setenv"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+jsondoc.Int(int64(i)).Text, st)
	}
	b.SetBytes(int64(len(Dump(states))))
	for b.Loop() {
		Dump(states)
	}
}
func load(t *testing.T, s string) jsondoc.Value {
	t.Helper()
	v, err := jsondoc.Loads([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
