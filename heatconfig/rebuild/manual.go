package rebuild

import (
	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is heat-config-rebuild-deployed's command line as its help and
// manual page tell it: it takes no argument; the multi-call binary
// answers --help and --version from this without running anything.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: "heat-config-rebuild-deployed",
		Description: "Marks every deployment of the node's metadata as deployed, so that heat-config does not run " +
			"them again: reads the deployments key with os-apply-config and creates an empty state file for each " +
			"(deployments of the os-apply-config group, and those without a group, are skipped). For a node " +
			"whose state directory was lost, as after a rebuild from an image. It takes 55-heat-config's lock on the " +
			"state directory first, waiting for a run in progress to end.",
		Version: "heat-config-rebuild-deployed: " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "mark the node's Heat deployments as already deployed",
			Synopsis: []string{"heat-config-rebuild-deployed"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: deployed.DirVar, Text: "The state directory (default " + deployed.DefaultDir + " when it exists, else " + deployed.LegacyDir + ")."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0 when every deployment was marked; 143 when stopped (SIGTERM or SIGINT) while waiting for the lock, nothing marked; 1 otherwise."}},
				{Title: "See also", Paragraphs: []string{"os-apply-config(1), heat-config-notify(1)"}},
			},
		},
	}
}
