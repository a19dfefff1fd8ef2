package heatconfig

import (
	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/signal"
)

// CLI is 55-heat-config's command line as its help and manual page tell
// it: it takes no argument; the multi-call binary answers --help and
// --version from this without running anything.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: "55-heat-config",
		Description: "The configure script of heat-config for os-refresh-config: runs each Heat software deployment " +
			"of the deployments file that has not run yet, in list order, one at a time. Each is recorded in the " +
			"state directory before its hook starts, handed as JSON on the standard input of the hook named after " +
			"its group, and its result is given to heat-config-notify, which signals Heat.",
		Version: "55-heat-config: " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "run the node's Heat software deployments through their hooks",
			Synopsis: []string{"55-heat-config"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: deployment.ListVar, Text: "The deployments file (default " + deployment.DefaultListFile + ")."},
					{Tag: deployed.DirVar, Text: "The state directory (default " + deployed.DefaultDir + ")."},
					{Tag: deployed.LegacyVar, Text: "The legacy state directory, migrated (default " + deployed.LegacyDir + ")."},
					{Tag: "HEAT_CONFIG_HOOKS", Text: "A directory searched for hooks before /usr/libexec/heat-config/hooks and /var/lib/heat-config/hooks."},
					{Tag: deadline.HookVar, Text: "A hook's deadline in seconds (default " + deadline.ForManual(deadline.DefaultHook) + ")."},
					{Tag: "HEAT_CONFIG_NOTIFY", Text: "The program that signals Heat (default heat-config-notify)."},
					{Tag: signal.TokenCacheVar, Text: "The Keystone token cache of heat-config-notify (default " + signal.DefaultTokenCache +
						"; empty or off keeps none): while a HEAT_SIGNAL or ZAQAR_SIGNAL deployment's hook runs, its token is fetched into it."},
				}},
				{Title: "Exit status", Paragraphs: []string{
					"0 when every deployment was looked at (a failed hook is signalled to Heat, not an exit status); 1 when the deployments file is missing, the state directory cannot be made, or HEAT_CONFIG_HOOK_TIMEOUT is invalid; 143 when stopped.",
				}},
				{Title: "See also", Paragraphs: []string{"heat-config-notify(1), heat-config-rebuild-deployed(1), os-refresh-config(1); /usr/share/doc/tripleo-agent/docs/hooks.md"}},
			},
		},
	}
}
