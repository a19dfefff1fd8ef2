package hosts

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/nodeconfig"
)

// CLI is 51-hosts' command line (it takes no argument).
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: Name,
		Description: "The hosts element's os-refresh-config step: puts the metadata's \"hosts\" lines between the " +
			"HEAT_HOSTS_START and HEAT_HOSTS_END lines of " + HostsFile + " and of cloud-init's hosts template " +
			"for the distribution (lsb_release -is), when those files exist.",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "put the metadata's hosts entries in /etc/hosts",
			Synopsis: []string{Name},
			Sections: []argparse.Section{
				nodeconfig.EnvironmentSection(true),
				{Title: "Exit status", Paragraphs: []string{"0 when written, or when there are no entries; 1 on bad metadata or a file that cannot be written."}},
			},
		},
	}
}
