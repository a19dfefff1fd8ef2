package jsondoc

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// dumpsSize is exact for text without escapes and a lower bound
// otherwise, over the Python golden values.
func TestDumpsSize(t *testing.T) {
	f, err := os.Open("testdata/python-golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct{ In, Dumps string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		v, err := Loads([]byte(c.In))
		if err != nil {
			continue
		}
		n := dumpsSize(v)
		if escaped := strings.Contains(c.Dumps, `\`); n > len(c.Dumps) || !escaped && n != len(c.Dumps) {
			t.Errorf("dumpsSize(%s) = %d, Dumps is %d bytes", c.In, n, len(c.Dumps))
		}
	}
}

func BenchmarkDumps(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"policy": {`)
	for i := range 300 {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(`"os_compute_api:servers:action` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `": "rule:admin_or_owner"`)
	}
	sb.WriteString(`}, "l": [1, 2.5, true, null]}`)
	v, err := Loads([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = Dumps(v)
	}
}
