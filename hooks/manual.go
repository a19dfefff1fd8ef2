package hooks

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is a hook's command line as its help and manual page tell it: it
// takes no argument; the multi-call binary answers --help and --version
// from this without reading stdin.
func CLI(h Hook) *argparse.Parser {
	return &argparse.Parser{
		Prog: h.Group,
		Description: "The heat-config hook of the " + h.Group + " group: reads one Heat software deployment as JSON " +
			"on its standard input, " + h.Summary + ", and writes the result (deploy_stdout, deploy_stderr, " +
			"deploy_status_code and the outputs) as JSON on its standard output. 55-heat-config runs it from " +
			"/usr/libexec/heat-config/hooks.",
		Version: h.Group + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "heat-config hook: " + h.Summary,
			Synopsis: []string{h.Group + " < DEPLOYMENT_JSON"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: TimeoutVar, Text: "The tool's deadline in seconds (default " + deadline.ForManual(deadline.DefaultHook) + ")."},
				}},
				{Title: "See also", Paragraphs: []string{"/usr/share/doc/tripleo-agent/docs/hooks.md"}},
			},
		},
	}
}
