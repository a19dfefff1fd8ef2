package doccmd

import (
	"slices"
	"testing"
)

func TestArgs(t *testing.T) {
	for _, c := range []struct {
		line, program, file string
		want                []string // nil: an error
	}{
		{"sudo apt-get install ./dist/tripleo-agent_*_amd64.deb", "apt-get", "/tmp/x/tripleo-agent_1.0-1_amd64.deb",
			[]string{"install", "/tmp/x/tripleo-agent_1.0-1_amd64.deb"}},
		{"sudo dnf install ./dist/tripleo-agent-*.x86_64.rpm", "dnf", "/w/tripleo-agent-1.0-1.x86_64.rpm",
			[]string{"install", "/w/tripleo-agent-1.0-1.x86_64.rpm"}},
		{"sudo dnf install ./dist/tripleo-agent-*.x86_64.rpm", "dnf", "/w/tripleo-agent-1.0-1.aarch64.rpm", nil},
		{"dnf install ./dist/tripleo-agent-*.x86_64.rpm", "dnf", "/w/tripleo-agent-1.0-1.x86_64.rpm", nil},
		{"sudo yum install ./dist/tripleo-agent-*.x86_64.rpm", "dnf", "/w/tripleo-agent-1.0-1.x86_64.rpm", nil},
		{"sudo dnf install tripleo-agent", "dnf", "/w/tripleo-agent-1.0-1.x86_64.rpm", nil},
	} {
		got, err := Args(c.line, c.program, c.file)
		if c.want == nil {
			if err == nil {
				t.Errorf("Args(%q, %q, %q) = %q, want an error", c.line, c.program, c.file, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Args(%q, %q, %q) = %q, %v; want %q", c.line, c.program, c.file, got, err, c.want)
		}
	}
}
