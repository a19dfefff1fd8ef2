// Package arch checks that the packages import each other as
// docs/architecture.md says: one way, from a program to what it uses and
// from a later stage of the pipeline to an earlier one, never back.
package arch

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tripleo-go/agent"

type listed struct {
	ImportPath           string
	Imports, TestImports []string
	XTestImports         []string
	ForTest              string
}

func TestImportsGoOneWay(t *testing.T) {
	rules, err := readRules()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	imports := map[string][]string{}
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		imports[pkg] = nil
		for _, why := range benchLeaks(pkg, p) {
			t.Error(why)
		}
		for _, imp := range p.Imports {
			if dep, ours := strings.CutPrefix(imp, module+"/"); ours {
				imports[pkg] = append(imports[pkg], dep)
			}
		}
	}
	if len(imports) < 30 {
		t.Fatalf("go list gave %d packages: not the whole module", len(imports))
	}
	for _, why := range violations(rules, imports) {
		t.Error(why)
	}
	// A row that fits no package is stale: the table must say what the
	// packages are today.
	for _, r := range rules {
		fits := false
		for pkg := range imports {
			fits = fits || matches(r.pkg, pkg)
		}
		if !fits {
			t.Errorf("docs/architecture.md's import table has a row for %s, which is no package", r.pkg)
		}
	}
}

// benchLeaks says where pkg reaches into the test bench. The agent's
// module (everything outside tools/) builds alone, without go.work: none
// of its packages, tests included, imports one of the tools module's
// (gonum/plot, go-fuse). And the test kits (internal/testkit/...) serve
// tests and the bench only: a package the agent is built from never
// imports one, outside its _test.go files.
func benchLeaks(pkg string, p listed) []string {
	var out []string
	bench := func(s string) bool { return matches("tools/...", s) || matches("test/...", s) }
	for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
		for _, imp := range list {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			switch {
			case matches("tools/...", dep) && !matches("tools/...", pkg):
				out = append(out, pkg+" imports "+dep+" of the tools module: the agent's module must build without it (go.work)")
			case matches("internal/testkit/...", dep) && !bench(pkg) && !matches("internal/testkit/...", pkg) && slices.Contains(p.Imports, imp):
				out = append(out, pkg+" imports the test kit "+dep+" outside its tests")
			}
		}
	}
	return out
}
