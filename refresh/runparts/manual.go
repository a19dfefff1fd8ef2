package runparts

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is dib-run-parts' command line as its help and manual page tell
// it. RunCLI parses the arguments itself, as the reference's shell script
// did; the multi-call binary answers --help and --version from this.
func CLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: "dib-run-parts",
		Description: "Runs the executable files of a directory one at a time, in the lexical order of their names, " +
			"and stops at the first that fails, exiting with its status. Only names made of letters, digits, " +
			"'_' and '-' run (RUN_PARTS_REGEX replaces that rule); each script's start, end and duration are logged, " +
			"and a profile of them all at the end. A file under environment.d of the directory (NAME.bash, " +
			"sourced in order) sets the scripts' environment.",
		Version: "dib-run-parts: " + version.Current().String(),
		Options: []*argparse.Option{
			{Names: []string{"--list"}, Kind: argparse.Flag, Help: "print the names of the files that would run, one a line, and run nothing"},
		},
		Manual: argparse.Manual{
			Summary:  "run the scripts of a directory in order",
			Synopsis: []string{"dib-run-parts [--list] SCRIPTS_DIRECTORY"},
			Sections: []argparse.Section{
				{Title: "Environment", Items: []argparse.Item{
					{Tag: "RUN_PARTS_REGEX", Text: "The names that run, a regular expression (default " + DefaultRegex + ")."},
				}},
				{Title: "Exit status", Paragraphs: []string{
					"0 when every script succeeded, or with --list; 1 when the directory is missing or not a directory; else the status of the first script that failed (128+n when it died of signal n).",
				}},
				{Title: "See also", Paragraphs: []string{"os-refresh-config(1), run-parts(8)"}},
			},
		},
	}
}
