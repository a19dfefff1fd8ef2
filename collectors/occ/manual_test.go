package occ

import "testing"

// Every option os-collect-config takes, its collectors' included, says
// in words what it does: the help and the manual page are made from it.
func TestEveryOptionHasHelp(t *testing.T) {
	p := CLI()
	if p.PositionalHelp == "" {
		t.Error("the collectors argument has no help")
	}
	if len(p.Options) < 70 {
		t.Errorf("only %d options", len(p.Options))
	}
	for _, o := range p.Options {
		if o.Help == "" {
			t.Errorf("option %v has no help: give its config.Option a Help", o.Names)
		}
	}
}
