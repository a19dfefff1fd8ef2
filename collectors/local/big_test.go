package local

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// bigDocument is a few MB of hieradata-like JSON, written by hand so
// that it has what json.dumps must rewrite: other whitespace, escapes
// (\/, \u0041, surrogate pairs), non-ASCII, numbers as 1E2, -0, 1e400
// and 0.10, and every literal.
func bigDocument(services int) string {
	var b strings.Builder
	b.WriteString("{\n")
	for s := range services {
		if s > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  "service_%04d" : {"motd": "nœud %d \u00e9t\u00E9 \ud83d\ude00 ☃", "path": "a\/b\\c\n\t",`, s, s)
		for k := range 100 {
			fmt.Fprintf(&b, ` "option_%03d":"value-%d-%s",`, k, s, strings.Repeat("x", k%40))
		}
		fmt.Fprintf(&b, `"n": [1E2, -0, 1e400, 0.10, %d, 123456789012345678901234567890, -1.5e-7], `, s)
		b.WriteString(`"flags": [true, false, null, {}, [], ""], "hosts": [`)
		for h := range 20 {
			if h > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"name": "host-%d-%d", "ip": "172.16.%d.%d", "roles": ["a", "\u0041"]}`, s, h, s%250, h)
		}
		b.WriteString("]}")
	}
	b.WriteString("\n}\n")
	return b.String()
}

// A file of a few MB, kept as its bytes (jsondoc.Raw), is collected and
// printed as the reference prints it.
func TestBigFileAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("a few MB through the reference")
	}
	difftest.Oracle(t)
	d := t.TempDir()
	doc := bigDocument(800)
	write(t, filepath.Join(d, "big.json"), doc, 0o600)
	entries, err := (&Collector{Paths: []string{d}, Log: logging.Discard}).Collect(context.Background())
	if err != nil || len(entries) != 1 {
		t.Fatalf("%v, %v", entries, err)
	}
	if _, ok := entries[0].Content.(*jsondoc.Raw); !ok {
		t.Errorf("a %d-byte document was decoded: %T", len(doc), entries[0].Content)
	}
	want := oracle(t, "../testdata/collector_oracle.py", Name, d)
	if got := render(entries, err); got != want {
		t.Errorf("ours and the reference differ on a %d-byte file", len(doc))
	}
}
