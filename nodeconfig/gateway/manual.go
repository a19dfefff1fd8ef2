package gateway

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/nodeconfig"
)

// CLI is 25-set-network-gateway's command line (it takes no argument).
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: Name,
		Description: "The network-gateway element's os-refresh-config step: sets GATEWAYDEV in " + File +
			" to the interface the metadata's " + Key + " names, then restarts it (ifdown, ifup).",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "make an interface the default gateway's (ifcfg systems)",
			Synopsis: []string{Name},
			Sections: []argparse.Section{
				nodeconfig.EnvironmentSection(true),
				{Title: "Exit status", Paragraphs: []string{"0 when set or when the key is absent; 1 on bad metadata, a missing /etc/sysconfig, or a failed ifdown or ifup."}},
			},
		},
	}
}
