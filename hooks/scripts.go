package hooks

import (
	"context"
	"log/slog"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/version"
)

// Script is an os-refresh-config script that comes with a hook (its
// element's configure.d): a program of the multi-call binary that
// prepares, before 55-heat-config runs the hooks, what the deployments
// of the hook's group need on the node, and removes what deployments
// that are gone left.
type Script struct {
	// Name is the script's file name, and its program name.
	Name string
	// Summary says what it does, a phrase, for its help and manual page.
	Summary string
	// Environment documents the variables it reads.
	Environment []argparse.Item
	// ExitStatus, when set, documents its exit statuses.
	ExitStatus string
	// Run does the work; its arguments are ignored, as the reference's
	// scripts ignore theirs.
	Run func(ctx context.Context, env Env) error
}

// RunScript runs s as its process: the log in the reference's format on
// stderr (the Python logger "heat-config").
func RunScript(ctx context.Context, s Script, args []string, env Env) error {
	if env.Log == nil {
		env.Log = logging.New(env.Stderr, logging.Options{
			Identifier: s.Name, Level: slog.LevelDebug,
			Prefix: logging.PythonPrefix(LoggerName), QuietAttrs: true,
		})
	}
	return s.Run(ctx, env)
}

// ScriptCLI is a script's command line as its help and manual page
// tell it.
func ScriptCLI(s Script) *argparse.Parser {
	sections := []argparse.Section{{Title: "Environment", Items: s.Environment}}
	if s.ExitStatus != "" {
		sections = append(sections, argparse.Section{Title: "Exit status", Paragraphs: []string{s.ExitStatus}})
	}
	sections = append(sections, argparse.Section{Title: "See also", Paragraphs: []string{"/usr/share/doc/tripleo-agent/docs/hooks.md"}})
	return &argparse.Parser{
		Prog: s.Name,
		Description: "An os-refresh-config configure.d script: " + s.Summary + ". It runs before 55-heat-config, " +
			"which runs the hooks.",
		Version: s.Name + ": " + version.Current().String(),
		Manual: argparse.Manual{
			Summary:  "os-refresh-config script: " + s.Summary,
			Synopsis: []string{s.Name},
			Sections: sections,
		},
	}
}
