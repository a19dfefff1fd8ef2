// Package arch checks that the packages import each other as
// docs/architecture.md says: one way, from a program to what it uses and
// from a later stage of the pipeline to an earlier one, never back.
package arch

import (
	"encoding/json"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tripleo-go/agent"

var internal = []string{"internal/..."}

// rules are docs/architecture.md's table: the first row whose pattern
// matches a package says what of ours it may import. "x/..." is x and
// everything under it; "x/*" is one level under x.
var rules = []struct {
	pkg string
	may []string
}{
	{"cmd/tripleo-agent", []string{"collectors/occ", "refresh", "refresh/runparts", "applyconfig", "heatconfig", "heatconfig/rebuild", "hooks", "hooks/all", "signal/notify", "signal/refreshcompleted", "status", "nodeconfig/...", "internal/exitcode", "internal/argparse", "internal/version"}},
	{"collectors/occ", []string{"collectors/...", "systemd", "heatconfig/deployed", "internal/..."}},
	{"collectors", []string{"collectors/cache", "collectors/config", "internal/..."}},
	{"collectors/merger", []string{"collectors", "deployment", "internal/..."}},
	{"collectors/cache", internal},
	{"collectors/config", internal},
	{"collectors/difftest", []string{"internal/..."}},
	{"collectors/all", []string{"collectors/...", "internal/..."}},
	{"collectors/*", []string{"collectors", "collectors/config", "collectors/merger", "collectors/cache", "internal/..."}},
	{"refresh", []string{"refresh/runparts", "internal/..."}},
	{"refresh/*", internal},
	{"applyconfig", []string{"applyconfig/...", "internal/..."}},
	{"applyconfig/*", internal},
	{"deployment", internal},
	{"heatconfig/deployed", internal},
	{"heatconfig", []string{"deployment", "heatconfig/deployed", "signal/all", "signal", "internal/..."}},
	{"heatconfig/*", []string{"deployment", "heatconfig/deployed", "internal/..."}},
	{"hooks", []string{"deployment", "internal/..."}},
	{"hooks/all", []string{"hooks/...", "internal/..."}},
	{"hooks/*", []string{"hooks", "deployment", "internal/..."}},
	{"signal", []string{"deployment", "internal/..."}},
	{"signal/notify", []string{"signal/...", "deployment", "internal/..."}},
	{"signal/refreshcompleted", []string{"signal/...", "deployment", "internal/..."}},
	{"signal/all", []string{"signal/...", "internal/..."}},
	{"signal/*", []string{"signal", "deployment", "internal/..."}},
	{"status", []string{"heatconfig/deployed", "internal/..."}},
	{"nodeconfig", []string{"applyconfig/metadata", "internal/..."}},
	{"nodeconfig/nodeconfigtest", []string{"nodeconfig", "applyconfig", "applyconfig/control", "internal/..."}},
	{"nodeconfig/*", []string{"nodeconfig", "applyconfig/metadata", "internal/..."}},
	{"internal/testkit/fleet", []string{"collectors/occ", "internal/..."}},
	{"internal/testkit/...", internal},
	{"internal/...", internal},
	{"systemd", nil},
	{"tools/...", []string{"..."}},
	{"test/...", []string{"..."}},
}

// matches tells whether pkg (relative to the module) fits pattern.
func matches(pattern, pkg string) bool {
	switch {
	case pattern == "...":
		return true
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	case strings.HasSuffix(pattern, "/*"):
		return path.Dir(pkg) == strings.TrimSuffix(pattern, "/*")
	}
	return pkg == pattern
}

type listed struct {
	ImportPath           string
	Imports, TestImports []string
	XTestImports         []string
	ForTest              string
}

func TestImportsGoOneWay(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		seen++
		var may []string
		found := false
		for _, r := range rules {
			if matches(r.pkg, pkg) {
				may, found = r.may, true
				break
			}
		}
		if !found {
			t.Errorf("%s: no row in docs/architecture.md's import table (and in this test's rules)", pkg)
			continue
		}
		for _, why := range benchLeaks(pkg, p) {
			t.Error(why)
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			ok := false
			for _, m := range may {
				if matches(m, dep) {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("%s imports %s, which its row does not allow", pkg, dep)
			}
		}
	}
	if seen < 30 {
		t.Fatalf("go list gave %d packages: not the whole module", seen)
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
