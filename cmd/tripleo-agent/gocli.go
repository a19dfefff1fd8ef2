package main

import (
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/status"
)

// statusCLI is tripleo-agent-status's command line as the manual pages and
// the completion read command lines. The program parses its flags with
// the standard library (it has no Python ancestor whose argparse to
// match); argparse here only lays out its page.
func statusCLI() *argparse.Parser {
	c := status.CLI()
	p := &argparse.Parser{Prog: c.Prog, Description: c.Description, Version: c.Version,
		Manual: argparse.Manual{Summary: c.Summary}}
	for _, o := range c.Options {
		opt := &argparse.Option{Names: o.Names, Kind: argparse.One, Metavar: o.Metavar, Help: o.Help, Choices: o.Choices}
		if o.Metavar == "" {
			opt.Kind = argparse.Flag
		}
		p.Options = append(p.Options, opt)
	}
	for _, s := range c.Sections {
		p.Manual.Sections = append(p.Manual.Sections, argparse.Section{Title: s.Title, Paragraphs: s.Paragraphs})
	}
	return p
}
