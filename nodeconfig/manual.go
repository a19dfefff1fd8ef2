package nodeconfig

import "github.com/tripleo-go/agent/internal/argparse"

// EnvironmentSection is the manual section every step shares.
func EnvironmentSection(metadata bool) argparse.Section {
	items := []argparse.Item{
		{Tag: RootVar, Text: "A directory prefixed to every system path read or written (tests point it at a scratch tree); unset in production."},
		{Tag: "PATH", Text: "Where the commands run are found."},
	}
	if metadata {
		items = append(items,
			argparse.Item{Tag: "OS_CONFIG_FILES", Text: "The metadata files, colon separated, as for os-apply-config; else the list in OS_CONFIG_FILES_PATH or " + osConfigFiles + "."},
			argparse.Item{Tag: "OS_CONFIG_FILES_PATH", Text: "The JSON list of metadata files read when OS_CONFIG_FILES is not set."})
	}
	return argparse.Section{Title: "Environment", Items: items}
}
