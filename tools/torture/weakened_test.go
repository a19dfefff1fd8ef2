package torture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// weaken writes a go build -overlay file that replaces one source file of
// the agent by a copy with one snippet replaced, and returns its path.
// The snippet must be there: the test follows the code it weakens.
func weaken(t *testing.T, rel, snippet, replacement string) string {
	t.Helper()
	src := filepath.Join(repoRoot(), rel)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), snippet) != 1 {
		t.Fatalf("%s no longer holds, once, the sync this test removes:\n%s", rel, snippet)
	}
	dir := t.TempDir()
	weak := filepath.Join(dir, filepath.Base(rel))
	if err := os.WriteFile(weak, []byte(strings.Replace(string(b), snippet, replacement, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{abs: weak}})
	path := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(path, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWeakenedBuildIsCaught shows that the power cuts find a missing
// sync: a build of the agent whose os-apply-config renames its staged
// files without first making their bytes durable (the syncfs of
// applyconfig/writer's batch.go removed, with go build -overlay:
// nothing in the product's code is there for the test) must fail the invariants of the
// bundled example's change within its trials; the real build passes the
// same trials (TestFaultApplyConfig).
func TestWeakenedBuildIsCaught(t *testing.T) {
	trials := count(t, "TORTURE_WEAKENED_CUTS", quickWeakenedCuts)
	overlay := weaken(t, "applyconfig/writer/batch.go",
		"\t\tif err := syncDirFS(dir); err != nil {\n\t\t\tb.discard()",
		"\t\tif err := error(nil); err != nil {\n\t\t\tb.discard()")
	agent := installed(t, overlay)
	n := newNode(t, agent)
	n.bind(filepath.Join(repoRoot(), "examples/node"), "srv/example", false)
	meta := []string{"/srv/example/metadata/10-ec2.json", "/srv/example/metadata/20-heat_local.json"}
	sc := &applyScenario{templates: "/srv/example/templates", oldMeta: meta,
		newMeta: append(append([]string{}, meta...), "/srv/example/metadata/30-deployments.json")}
	res := runTrials(t, n, sc, cut, trials)
	caught := 0
	for _, p := range res.problems {
		if strings.Contains(p, "neither old nor new") || strings.Contains(p, "exited 0, yet") {
			caught++
		}
	}
	t.Logf("TORTURE weakened os-apply-config (no syncfs before the renames): %d cuts, %d problems found, e.g. %q",
		res.trials, len(res.problems), first(res.problems))
	if caught == 0 {
		t.Fatalf("the harness did not catch a build without the writer's syncfs in %d cuts", res.trials)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
