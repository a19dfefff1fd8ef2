package arch

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The agent's module (the root go.mod) is what ships: it must build and
// test alone, without go.work and the tools module beside it, and every
// module it requires directly must be used by one of its packages or
// their tests, so that the bench's dependencies (gonum/plot, go-fuse)
// cannot creep back into it. go mod tidy says the same, but it needs the
// network for the test dependencies of dependencies; this runs offline.
func TestAgentModuleStandsAlone(t *testing.T) {
	env := append(os.Environ(), "GOWORK=off")
	list := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	list.Dir, list.Env = "../..", env
	out, err := list.Output()
	if err != nil {
		t.Fatalf("GOWORK=off go list ./...: %v\n%s", err, stderrOf(err))
	}
	used := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		used[m] = true
	}
	if !used[module] {
		t.Fatalf("GOWORK=off go list ./... gave no package of %s", module)
	}

	edit := exec.Command("go", "mod", "edit", "-json")
	edit.Dir, edit.Env = "../..", env
	out, err = edit.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v\n%s", err, stderrOf(err))
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	for _, r := range mod.Require {
		if !r.Indirect && !used[r.Path] {
			t.Errorf("go.mod requires %s, which no package of the agent's module or its tests imports (the bench's go here: tools/go.mod)", r.Path)
		}
	}
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
