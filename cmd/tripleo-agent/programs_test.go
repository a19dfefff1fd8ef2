package main

import "testing"

// One table says every name the binary answers to: each row is whole,
// and no name is given twice (a hook, a hook's script and a node step
// come from lists of their own, and would shadow each other silently).
func TestProgramTable(t *testing.T) {
	seen := map[string]bool{"tripleo-agent": true}
	for _, p := range programs {
		if p.name == "" || p.run == nil || p.cli == nil {
			t.Errorf("%q: a program needs a name, a run and a command line", p.name)
		}
		if seen[p.name] {
			t.Errorf("%s: two programs of that name", p.name)
		}
		seen[p.name] = true
		if got, ok := lookup(p.name); !ok || got.name != p.name {
			t.Errorf("lookup(%q) = %q, %v", p.name, got.name, ok)
		}
	}
	if _, ok := lookup("no-such-program"); ok {
		t.Error("lookup found a program that is not in the table")
	}
	if bin := binPrograms(); len(bin) < 2 || bin[0] != "tripleo-agent" {
		t.Errorf("binPrograms() = %q, want tripleo-agent first", bin)
	}
}
