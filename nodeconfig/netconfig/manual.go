package netconfig

import (
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is the program's command line as its help and manual page tell it;
// it takes no argument, so the multi-call binary answers --help and
// --version from this without running anything.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: Name,
		Description: "An os-refresh-config configure script of the os-net-config element: when the metadata has os_net_config, " +
			"runs os-net-config on " + ElementConfig + " (which os-apply-config rendered from it), waits for the metadata server " +
			"to answer a ping when the network changed, and falls back to DHCP on every linked interface when it failed.",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "configure the network with os-net-config from the metadata",
			Synopsis: []string{Name},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: metadata.FilesVar, Text: "The metadata files, as os-apply-config reads them."},
					{Tag: "PATH", Text: "Where os-net-config, ip and ping are found."},
					{Tag: RootVar, Text: "A directory every path read or written is under (tests; default none): /etc/os-net-config, /etc/udev/rules.d, /sys/class/net, the metadata lists."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0 when the network is configured or there is nothing to do; 1 when os-net-config failed or the metadata server did not answer (after the safe defaults were applied), or on unreadable or bad metadata: an os_net_config that is not an object with a network_config list (or a string holding one in JSON or YAML), or a metadata server URL without a host (one line naming the file or key, nothing run)."}},
			},
		},
	}
}
