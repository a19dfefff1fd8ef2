package install

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks/all"
)

const elementsDir = "../../elements"

// elementDeps reads an element's element-deps (none: no file).
func elementDeps(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(elementsDir, name, "element-deps"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// The elements are in diskimage-builder's format: a directory each, with
// a README, element-deps naming elements that exist, phase scripts that
// are executable bash stopping at the first error, and nothing of a
// phase apply-elements does not run.
func TestElementsAreWellFormed(t *testing.T) {
	ents, err := os.ReadDir(elementsDir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		if e.IsDir() {
			names[e.Name()] = true
		}
	}
	for name := range names {
		dir := filepath.Join(elementsDir, name)
		if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
			t.Errorf("element %s has no README.md", name)
		}
		for _, dep := range elementDeps(t, name) {
			if !names[dep] {
				t.Errorf("element %s depends on %s, which is not in elements/", name, dep)
			}
		}
		scripts, _ := filepath.Glob(filepath.Join(dir, "*.d", "*"))
		for _, s := range scripts {
			phase := filepath.Base(filepath.Dir(s))
			if phase == "root.d" || phase == "block-device.d" {
				t.Errorf("%s: apply-elements does not run %s", s, phase)
			}
			fi, err := os.Stat(s)
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("%s is not executable (%v)", s, err)
				continue
			}
			b, _ := os.ReadFile(s)
			if !strings.HasPrefix(string(b), "#!/bin/bash\n") || !strings.Contains(string(b), "set -e") {
				t.Errorf("%s: want a bash script with set -e", s)
			}
		}
	}
}

// closure is the set of elements name brings in, as apply-elements (and
// diskimage-builder) resolve element-deps.
func closure(t *testing.T, name string) []string {
	seen := map[string]bool{}
	queue := []string{name}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if !seen[e] {
			seen[e] = true
			queue = append(queue, elementDeps(t, e)...)
		}
	}
	var out []string
	for e := range seen {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// One element per program as TripleO has them, one per hook: each hook
// element brings in heat-config, which brings in the daemon, the phase
// runner, the renderer and the package; and each checks its hook is there.
func TestEveryHookHasAnElement(t *testing.T) {
	programs := []string{"heat-config", "os-apply-config", "os-collect-config", "os-refresh-config", "tripleo-agent"}
	for _, h := range all.Hooks {
		name := "heat-config-" + h.Group
		got := closure(t, name)
		want := append([]string{name}, programs...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s brings in %v, want %v", name, got, want)
		}
		b, err := os.ReadFile(filepath.Join(elementsDir, name, "install.d", "50-heat-config-hook-"+h.Group))
		if err != nil || !strings.Contains(string(b), "/usr/libexec/heat-config/hooks/"+h.Group) {
			t.Errorf("%s: its install.d does not check for the hook (%v)", name, err)
		}
	}
}

// nodeElements carry the node's own configure steps: in images built with
// them only, never in the package (Makefile: NODE_ELEMENTS).
var nodeElements = []string{"sysctl", "os-net-config", "network-gateway", "hiera", "hosts"}

// What the elements carry for os-refresh-config is what make install
// lays out, but the node elements' steps: the same scripts, links to the
// binary.
func TestElementScriptsAreInstalled(t *testing.T) {
	dest := installed(t)
	scripts, _ := filepath.Glob(filepath.Join(elementsDir, "*", "os-refresh-config", "*.d", "*"))
	if len(scripts) != 12 {
		t.Fatalf("os-refresh-config scripts in elements: %v, want 10-hiera-disable, 10-sysctl-apply-config, 20-os-apply-config, 20-os-net-config, 25-set-network-gateway, 40-hiera-datafiles, 50-heat-config-docker-cmd, 50-heat-config-docker-compose, 50-heat-config-kubelet, 51-hosts, 55-heat-config, 99-refresh-completed", scripts)
	}
	for _, s := range scripts {
		rel := filepath.Join(filepath.Base(filepath.Dir(s)), filepath.Base(s))
		installed := filepath.Join(dest, "usr/libexec/os-refresh-config", rel)
		element := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(s))))
		if slices.Contains(nodeElements, element) {
			if target, err := os.Readlink(s); err != nil || target != "../../../bin/tripleo-agent" {
				t.Errorf("%s of %s is %q (%v), want a link to the binary", rel, element, target, err)
			}
			if _, err := os.Lstat(installed); err == nil {
				t.Errorf("%s of %s is in make install's tree: a node element's step", rel, element)
			}
			continue
		}
		if target, err := os.Readlink(installed); err != nil || target != "../../../bin/tripleo-agent" {
			t.Errorf("%s: make install has %q (%v)", rel, target, err)
		}
	}
}
