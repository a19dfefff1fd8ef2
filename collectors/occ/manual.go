package occ

import (
	"github.com/tripleo-go/agent/collectors/all"
	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// titles are the option groups' titles in the help and manual page.
var titles = map[string]string{
	"keystone":   "Keystone options (the heat and zaqar collectors)",
	"heat_local": "heat_local collector options",
	"ec2":        "ec2 collector options",
	"cfn":        "cfn collector options",
	"heat":       "heat collector options",
	"request":    "request collector options",
	"local":      "local collector options",
	"zaqar":      "zaqar collector options",
}

// CLI is os-collect-config's command line: the parser its options make,
// which gives both --help and the manual page.
func CLI() *argparse.Parser {
	set := newConfig(all.Collectors).options(all.Collectors)
	return set.Parser()
}

// describe adds to os-collect-config's parser its description, manual
// sections and build line.
func describe(p *argparse.Parser) {
	p.Build = version.Current().String()
	p.Description = "Collects the node's metadata from the configured sources (the collectors), keeps it in a cache, " +
		"and runs a command (usually os-refresh-config) when it changed, with OS_CONFIG_FILES naming the metadata " +
		"files; the new metadata is committed only when the command succeeds, so a failed command runs again on the " +
		"next pass. With a command it keeps polling until stopped (a SIGHUP or a changed configuration file reloads " +
		"it); without one it prints the metadata as a JSON map and exits.\n\n" +
		"Every option can be set in the configuration file, in its group's section ([DEFAULT], [heat], ...) with " +
		"'_' for '-' (command = os-refresh-config); the command line wins. Options marked \"Ours\" are not in the " +
		"Python os-collect-config."
	p.Manual = argparse.Manual{
		Summary: "collect the node's configuration metadata and act on its changes",
		Sections: []argparse.Section{
			{Title: "Files", Items: []argparse.Item{
				{Tag: "/etc/os-collect-config.conf", Text: "The configuration file."},
				{Tag: cache.DefaultDir, Text: "The cache: KEY.json (last collected), KEY.json.last (last committed), KEY.json.orig (first seen), os_config_files.json."},
			}},
			{Title: "Exit status", Paragraphs: []string{
				"0 for --print, --print-cachedir, no command, or a one-time run whose command succeeded or had nothing to do; the command's status for a one-time run whose command failed; 1 for an unknown collector or an invalid configuration; 2 for a usage error; 124 when --one-time-timeout or command-timeout expired; death by SIGTERM or SIGINT when stopped by it.",
			}},
			{Title: "See also", Paragraphs: []string{"os-refresh-config(1), os-apply-config(1), tripleo-agent-status(1); /usr/share/doc/tripleo-agent/README.md"}},
		},
	}
}

// Collectors are the collectors' names, in the registry's order.
func Collectors() []string { return names(all.Collectors) }
