package heatconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// bigConfig is a structured config of about n services, a few MB of
// what json.dumps must rewrite: whitespace, escapes, non-ASCII, numbers.
func bigConfig(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for s := range n {
		if s > 0 {
			b.WriteString(",\n ")
		}
		fmt.Fprintf(&b, `"service_%04d":{"motd":"n\u0153ud %d ☃ \ud83d\ude00","path":"a\/b\n",`, s, s)
		for k := range 80 {
			fmt.Fprintf(&b, `"option_%02d": "value-%d-%s", `, k, s, strings.Repeat("x", k%30))
		}
		fmt.Fprintf(&b, `"n":[1E2,-0,0.10,%d,123456789012345678901234567890],"hosts":[{"a":true},{"b":null},[]]}`, s)
	}
	return b.String() + "}"
}

// A deployment whose config is a few MB (kept undecoded, deployment.
// ListOwned) reaches its hook and its state file exactly as the decoded
// document would be written; a config given twice keeps its first
// place and its last value.
func TestBigConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("a few MB of config")
	}
	n := newNode(t)
	n.hook("g", echoHook)
	d := dep("big", "g", `"config": `+bigConfig(1500))
	n.deployments(d)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, d)
	stdin, _ := os.ReadFile(filepath.Join(n.dir, "g.stdin"))
	if len(stdin) < 2<<20 || string(stdin) != jsondoc.Dumps(want) {
		t.Errorf("the hook got %d bytes, not the deployment's %d", len(stdin), len(jsondoc.Dumps(want)))
	}
	if s, _ := n.state("big.json"); s != jsondoc.DumpsIndent(want, 2) {
		t.Errorf("the state file differs from the deployment (%d bytes)", len(s))
	}
}
