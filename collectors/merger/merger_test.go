package merger

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

var docs = []string{
	`{"a": 1}`,
	`{"deployments": [{"name": "d-oac", "group": "os-apply-config", "config": {"x": 1}}, {"name": "d-script", "group": "script", "config": "echo"}, {"group": "os-apply-config", "config": {}}, {"name": "d-ungrouped", "config": [1]}, {"name": "d-heat", "group": "Heat::Ungrouped", "config": null}]}`,
	`{"deployments": {"not": "a list"}}`,
	`{"deployments": [], "extra": [{"name": "e1", "config": {"k": "v"}}]}`,
	`{"extra": [{"name": 5, "config": 1}], "deployments": [{"name": "z", "config": 2}]}`,
	`[1, 2]`,
}

// The reference's merger and ours agree on every document it does not
// crash on.
func TestAgainstReferenceModule(t *testing.T) {
	difftest.Oracle(t)
	cmd := exec.Command("/usr/bin/python3", "testdata/oracle.py")
	cmd.Stdin = strings.NewReader(strings.Join(docs, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("oracle: %v\n%s", err, out)
		}
		t.Skipf("reference merger not available: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(docs) {
		t.Fatalf("oracle printed %d lines for %d docs:\n%s", len(lines), len(docs), out)
	}
	for i, d := range docs {
		if strings.HasPrefix(lines[i], `"CRASH`) {
			continue // list documents crash the reference; covered below
		}
		doc, _ := jsondoc.Loads([]byte(d))
		var pairs []jsondoc.Value
		for _, e := range Explode("heat", doc, []string{"deployments", "extra"}, logging.Discard) {
			pairs = append(pairs, []jsondoc.Value{e.Name, e.Content})
		}
		want, _ := jsondoc.Loads([]byte(lines[i]))
		for _, p := range want.([]jsondoc.Value) {
			pair := p.([]jsondoc.Value)
			pair[0] = jsondoc.PyStr(pair[0]) // a name becomes a cache file name
		}
		if got := jsondoc.Dumps(pairs); got != jsondoc.Dumps(want) {
			t.Errorf("doc %d:\nreference %s\nours      %s", i, jsondoc.Dumps(want), got)
		}
	}
}

// Deliberate fixes: a deployment without config, or that is not an
// object, is skipped with a warning (the reference crashed).
func TestBadDeploymentsSkippedWithWarning(t *testing.T) {
	doc, _ := jsondoc.Loads([]byte(`{"deployments": [{"name": "noconfig"}, "a string with name in it", {"name": "ok", "config": {}}]}`))
	var buf bytes.Buffer
	got := Explode("heat", doc, []string{"deployments"}, slog.New(slog.NewTextHandler(&buf, nil)))
	if len(got) != 2 || got[1].Name != "ok" {
		t.Fatalf("got %+v", got)
	}
	if !strings.Contains(buf.String(), "noconfig under deployments has no config") || !strings.Contains(buf.String(), "is not an object") {
		t.Fatalf("warnings: %s", buf.String())
	}
}
