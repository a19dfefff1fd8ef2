package refreshcompleted

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/signal"
)

// CLI is 99-refresh-completed's command line as its help and manual page
// tell it: it takes no argument; the multi-call binary answers --help and
// --version from this without running anything.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: "99-refresh-completed",
		Description: "The last post-configure script of os-refresh-config: signals Heat that each deployment of " +
			"the os-apply-config group in the metadata is complete (no hook runs them), once per deployment id.",
		Version: "99-refresh-completed: " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "signal the os-apply-config group's deployments as complete",
			Synopsis: []string{"99-refresh-completed"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: "OS_APPLY_CONFIG_DEPLOYED", Text: "The directory of the signalled ids (default " + markerDir + ")."},
					{Tag: signal.TokenCacheVar, Text: "The directory where the stack users' Keystone tokens are kept for the next signal " +
						"(HEAT_SIGNAL, ZAQAR_SIGNAL), as heat-config-notify keeps them (default " + signal.DefaultTokenCache + "); empty or off keeps none."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0 when every deployment was signalled; 1 when a signal failed (the refresh runs again)."}},
			},
		},
	}
}
