package applyconfig

import (
	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
)

// CLI is os-apply-config's command line: the parser, whose options give
// both --help and the manual page (tripleo-agent --man os-apply-config).
func CLI() *argparse.Parser {
	p := newParser()
	p.Manual = argparse.Manual{
		Summary: "render configuration files from the node's metadata",
		Sections: []argparse.Section{
			{Title: "Environment", Items: []argparse.Item{
				{Tag: metadata.FilesVar, Text: "Colon-separated metadata files to merge, in order (later wins), when --metadata is not given. os-collect-config sets it for its command."},
				{Tag: metadata.ListPathVar, Text: "Replaces the default path of os_config_files.json (" + metadata.OSConfigFilesList + ")."},
				{Tag: "OS_CONFIG_APPLIER_TEMPLATES", Text: "Template root when --templates is not given (default " + DefaultTemplatesDir + ")."},
			}},
			{Title: "Files", Items: []argparse.Item{
				{Tag: DefaultTemplatesDir, Text: "The templates: each file renders the file of the same relative path under the output root; NAME.oac beside it sets mode, owner, group and allow_empty."},
				{Tag: metadata.OSConfigFilesList, Text: "The metadata files of os-collect-config's last pass, used when neither --metadata nor OS_CONFIG_FILES is given."},
			}},
			{Title: "Exit status", Paragraphs: []string{
				"0 when every file was rendered and written (or validated), or the key was printed; 1 when a template, a metadata file or a write failed, with nothing written; 2 for a usage error. --boolean-key exits 0 for true, 1 for false and 255 for anything else.",
			}},
			{Title: "See also", Paragraphs: []string{"os-collect-config(1), os-refresh-config(1); /usr/share/doc/tripleo-agent/README.md"}},
		},
	}
	return p
}

// versionLines are --version's output: the reference's release alone on
// stdout, where scripts capture it ($(os-apply-config --version)), and
// this build on stderr.
func versionLines() (stdout, stderr string) {
	return version.Reference, version.Current().String()
}
