package status

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is tripleo-agent-status's command line: the parser, whose options
// give both --help and the manual page.
func CLI() *argparse.Parser {
	p := newParser()
	p.Version = "tripleo-agent-status: " + version.Current().String()
	p.Manual = argparse.Manual{
		Summary: "tell what the configuration agent last did",
		Sections: []argparse.Section{
			{Title: "Exit status", Paragraphs: []string{
				"0 when healthy: the last pass converged and no deployment failed; 1 when degraded; 2 for a usage error; 3 when no pass has ended since boot (with --wait: not before the timeout).",
			}},
			{Title: "See also", Paragraphs: []string{"os-collect-config(1); /usr/share/doc/tripleo-agent/docs/status.md"}},
		},
	}
	return p
}
