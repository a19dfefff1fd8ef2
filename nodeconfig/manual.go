package nodeconfig

import (
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/argparse"
)

// EnvironmentSection is the manual section every step shares.
func EnvironmentSection(readsMetadata bool) argparse.Section {
	items := []argparse.Item{
		{Tag: RootVar, Text: "A directory prefixed to every system path read or written (tests point it at a scratch tree); unset in production."},
		{Tag: "PATH", Text: "Where the commands run are found."},
	}
	if readsMetadata {
		items = append(items,
			argparse.Item{Tag: metadata.FilesVar, Text: "The metadata files, colon separated, as for os-apply-config; else the list in OS_CONFIG_FILES_PATH or " + metadata.OSConfigFilesList + "."},
			argparse.Item{Tag: metadata.ListPathVar, Text: "The JSON list of metadata files read when OS_CONFIG_FILES is not set."})
	}
	return argparse.Section{Title: "Environment", Items: items}
}
