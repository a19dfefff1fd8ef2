package all_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/nodeconfig/all"
)

// Each step is whole (a name, a run, a command line) and named once;
// and it is where its element says: an os-refresh-config script of the
// element linked to the binary, or, for the helpers other elements
// call, the element's bin/ wrapper that runs it by name.
func TestStepsAreWholeAndInTheirElements(t *testing.T) {
	if len(all.Steps) < 9 {
		t.Fatalf("%d steps, want the 9 of sysctl, os-net-config, network-gateway, hiera and hosts", len(all.Steps))
	}
	seen := map[string]bool{}
	for _, s := range all.Steps {
		if s.Name == "" || s.Element == "" || s.Run == nil || s.CLI == nil {
			t.Errorf("%+v: a step needs a name, an element, a run and a command line", s)
			continue
		}
		if seen[s.Name] {
			t.Errorf("%s: listed twice", s.Name)
		}
		seen[s.Name] = true
		if p := s.CLI(); p.Prog != s.Name {
			t.Errorf("%s: its command line is %s's", s.Name, p.Prog)
		}
		dir := filepath.Join("../../elements", s.Element)
		if s.Bin {
			wrapper, err := os.ReadFile(filepath.Join(dir, "bin", s.Name))
			if err != nil || !strings.Contains(string(wrapper), "exec tripleo-agent "+s.Name+` "$@"`) {
				t.Errorf("%s: %s/bin/%s does not run it (%v)", s.Name, dir, s.Name, err)
			}
			continue
		}
		links, _ := filepath.Glob(filepath.Join(dir, "os-refresh-config", "*.d", s.Name))
		if len(links) != 1 {
			t.Errorf("%s: no os-refresh-config script of that name in %s", s.Name, dir)
			continue
		}
		if target, err := os.Readlink(links[0]); err != nil || target != "../../../bin/tripleo-agent" {
			t.Errorf("%s: want a link to ../../../bin/tripleo-agent, got %q (%v)", links[0], target, err)
		}
	}
}

// The Makefile's NODE_ELEMENTS (the elements make install leaves out)
// are the elements of the steps, in the list's order.
func TestMakefileNodeElementsAreTheSteps(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(mk), "\nNODE_ELEMENTS := ")
	if !ok {
		t.Fatal("no NODE_ELEMENTS in the Makefile")
	}
	line, _, _ := strings.Cut(rest, "\n")
	var want []string
	for _, s := range all.Steps {
		if e := "elements/" + s.Element; !slices.Contains(want, e) {
			want = append(want, e)
		}
	}
	if got := strings.Fields(line); !slices.Equal(got, want) {
		t.Errorf("Makefile NODE_ELEMENTS = %q, nodeconfig/all's elements are %q", got, want)
	}
}
