package cleanup

import (
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/dockercmd"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is 50-heat-config-docker-cmd's command line as its help and manual
// page tell it: it takes no argument; the multi-call binary answers
// --help and --version from this without running anything.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: Name,
		Description: "A configure script of os-refresh-config, run before 55-heat-config: removes the containers " +
			"that the docker-cmd hook started for deployments no longer in heat-config's list, then renames " +
			"containers started under a suffixed name to the name they were meant to have once it is free.",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "remove the containers of deleted docker-cmd deployments",
			Synopsis: []string{Name},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: ConfigVar, Text: "The deployments list (default " + DefaultConfig + ")."},
					{Tag: dockercmd.CmdVar, Text: "The container command, docker (the default) or podman, or a path to either."},
					{Tag: hooks.TimeoutVar, Text: "The deadline of each container command in seconds (default 4 hours)."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0, also when the list is missing or not JSON, or a container command fails; " +
					"1 when the list is JSON but not a list of deployments (nothing is removed)."}},
				{Title: "See also", Paragraphs: []string{"/usr/share/doc/tripleo-agent/docs/hooks.md"}},
			},
		},
	}
}
