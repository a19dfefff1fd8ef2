package hiera

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
		Description: "An os-refresh-config configure script of the hiera element: writes " + DataDir +
			"/NAME.yaml for each entry of the metadata's hiera.datafiles, from its raw_data, mapped_data and oac_data.",
		Version: Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "write hiera data files from the metadata",
			Synopsis: []string{Name},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: metadata.FilesVar, Text: "The metadata files, as os-apply-config reads them."},
					{Tag: RootVar, Text: "A directory every path read or written is under (tests; default none)."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0 when every file was written; 1 on bad metadata (one line names the key, no file changes) or a failed write."}},
			},
		},
	}
}

// DisableCLI is 10-hiera-disable's command line.
func DisableCLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: DisableName,
		Description: "An os-refresh-config configure script of the hiera element: when " + ConfigFile + " is the heat-agents " +
			"hiera hook's (no \"yaml\" in it), removes the element's hiera.yaml template, its " + Name + " step and the " +
			"YAML files in " + DataDir + ", so that the two do not fight over the file.",
		Version: DisableName + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "retire the hiera element once the hiera hook is in use",
			Synopsis: []string{DisableName},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: "OS_CONFIG_APPLIER_TEMPLATES", Text: "os-apply-config's templates (default " + templatesDir + ")."},
					{Tag: "OS_REFRESH_CONFIG_BASE_DIR", Text: "os-refresh-config's scripts (default " + refreshDir + ")."},
					{Tag: RootVar, Text: "A directory every default path is under (tests; default none)."},
				}},
				{Title: "Exit status", Paragraphs: []string{"0, unless a file could not be removed (1)."}},
			},
		},
	}
}
