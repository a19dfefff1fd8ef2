package refresh

import (
	"strings"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is os-refresh-config's command line: the parser, whose options
// give both --help and the manual page. --version is ours (the reference
// refuses it): the reference's release on stdout, this build on stderr;
// it stays out of the usage line, which usage errors print as the
// reference does.
func CLI() *argparse.Parser {
	p := newParser()
	p.Version, p.Build, p.VersionNotInUsage = version.Reference, version.Current().String(), true
	p.Manual = argparse.Manual{
		Summary: "run the configuration phases of the node",
		Sections: []argparse.Section{
			{Title: "Phases", Paragraphs: []string{
				"The phases run in this order, each a directory of scripts under the base directory run by dib-run-parts: " + strings.Join(Phases, ", ") + ". When a phase fails, the scripts of error.d run and os-refresh-config exits 1.",
			}},
			{Title: "Environment", Items: []argparse.Item{
				{Tag: "OS_REFRESH_CONFIG_BASE_DIR", Text: "The base directory (default " + DefaultBaseDir + ")."},
			}},
			{Title: "Files", Items: []argparse.Item{
				{Tag: DefaultBaseDir, Text: "The phase directories."},
				{Tag: DefaultLockfile, Text: "The lock that keeps a second run out (see --lockfile)."},
			}},
			{Title: "Exit status", Paragraphs: []string{
				"0 when every phase succeeded; 1 when a phase failed or the lock file could not be opened; 2 for a usage error; 11 when another run holds the lock; death by SIGTERM or SIGINT when stopped by it.",
			}},
			{Title: "See also", Paragraphs: []string{"dib-run-parts(1), os-apply-config(1), os-collect-config(1)"}},
		},
	}
	return p
}
