package sysctl

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/version"
	"github.com/tripleo-go/agent/nodeconfig"
)

func parser(prog, desc, summary, synopsis, status string, metadata bool) *argparse.Parser {
	return &argparse.Parser{
		Prog: prog, Description: desc,
		Version: prog + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  summary,
			Synopsis: []string{synopsis},
			Sections: []argparse.Section{
				nodeconfig.EnvironmentSection(metadata),
				{Title: "Files", Items: []argparse.Item{{Tag: Dir + "/NAME.conf", Text: "One parameter's file: a comment line, then \"NAME = VALUE\"."}}},
				{Title: "Exit status", Paragraphs: []string{status}},
			},
		},
	}
}

// ApplyCLI is 10-sysctl-apply-config's command line (it takes no
// argument).
func ApplyCLI() *argparse.Parser {
	return parser(ApplyName,
		"The sysctl element's os-refresh-config step: sets each kernel parameter of the metadata's \"sysctl\" object "+
			"(name to value) as sysctl-set-value does, after checking them all; bad metadata changes nothing.",
		"set the kernel parameters the metadata names", ApplyName,
		"0 when every parameter is set (or there is none); 1 on bad metadata, a conflicting file, or a value the kernel refuses.", true)
}

// SetCLI is sysctl-set-value's.
func SetCLI() *argparse.Parser {
	return parser("sysctl-set-value",
		"Sets a kernel parameter and keeps it: writes "+Dir+"/NAME.conf and loads it with sysctl -p, unless that file "+
			"already sets VALUE; refuses a parameter the kernel does not have, or a file that sets another value.",
		"set and keep one kernel parameter", "sysctl-set-value NAME VALUE [COMMENT]",
		"0 when the parameter is set; 1 otherwise.", false)
}

// WriteCLI is sysctl-write-value's.
func WriteCLI() *argparse.Parser {
	return parser("sysctl-write-value",
		"Writes "+Dir+"/NAME.conf (\"# COMMENT\", \"NAME = VALUE\") and nothing else: no check, no load (image builds).",
		"write one kernel parameter's file", "sysctl-write-value NAME VALUE [COMMENT]",
		"0 when the file is written; 1 otherwise.", false)
}

// AppendCLI is sysctl-append-value's.
func AppendCLI() *argparse.Parser {
	return parser("sysctl-append-value",
		"Adds VALUE to the comma-separated list "+Dir+"/NAME.conf holds, or starts it; no check, no load (image builds). "+
			"The comment line keeps the first word of COMMENT (\"# This\" by default), as the reference wrote it.",
		"add a value to one kernel parameter's list", "sysctl-append-value NAME VALUE [COMMENT]",
		"0 when the file is written; 1 otherwise.", false)
}
