package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/version"
)

// answered answers --help and --version for a program that reads its
// arguments itself, so that asking never runs it (55-heat-config --help
// used to run the deployments).
func answered(prog program, args []string, stdout, stderr io.Writer) bool {
	if prog.ownHelp {
		return false
	}
	p := prog.cli()
	p.Stderr = stderr
	return p.Answer(args, stdout)
}

// agentCLI is tripleo-agent's own command line, when it is not run as
// one of its programs.
func agentCLI() *argparse.Parser {
	return &argparse.Parser{
		Prog: "tripleo-agent",
		Description: "The TripleO on-node configuration agent: one binary for all its programs, run through a " +
			"link named after the program (os-collect-config, ...), or with the program's name as its first " +
			"argument (tripleo-agent os-collect-config --help). Its programs: " + strings.Join(programNames(), ", ") + ".",
		Version: version.Current().String(),
		Options: []*argparse.Option{
			{Names: []string{"--man"}, Kind: argparse.One, Metavar: "PROGRAM", Help: "print the manual page (roff) of PROGRAM, or of tripleo-agent itself, and exit",
				Choices: append(programNames(), "tripleo-agent")},
			{Names: []string{"--completion"}, Kind: argparse.One, Metavar: "SHELL", Help: "print the completion script of every program for SHELL (bash) and exit",
				Choices: []string{"bash"}},
		},
		Manual: argparse.Manual{
			Summary:  "the TripleO on-node configuration agent",
			Synopsis: []string{"tripleo-agent PROGRAM [ARGUMENT ...]", "tripleo-agent --help | --version | --man PROGRAM"},
			Sections: []argparse.Section{
				{Title: "Exit status", Paragraphs: []string{"That of the program run; 0 for --help, --version and --man; 2 for an unknown program."}},
				{Title: "See also", Paragraphs: []string{"os-collect-config(1), os-refresh-config(1), os-apply-config(1), dib-run-parts(1), heat-config-notify(1), heat-config-rebuild-deployed(1), tripleo-agent-status(1)"}},
			},
		},
	}
}

// agentMain is tripleo-agent run under its own name: --help lists the
// programs, --version tells the build, --man prints a manual page; no
// argument or an unknown program is a usage error that lists them.
func agentMain(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	p := agentCLI()
	p.Stderr = stderr
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s\ntripleo-agent: error: name a program: %s\n", p.Usage(), strings.Join(programNames(), ", "))
		return exitcode.Usage
	}
	if !strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(stderr, "%s\ntripleo-agent: error: unknown program %q; the programs are: %s\n", p.Usage(), args[0], strings.Join(programNames(), ", "))
		return exitcode.Usage
	}
	res, err := parseAgentArgs(args)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s\ntripleo-agent: error: %v\n", p.Usage(), err)
		return exitcode.Usage
	case res.help:
		io.WriteString(stdout, p.Help())
		return exitcode.OK
	case res.version:
		fmt.Fprintln(stdout, p.Version)
		return exitcode.OK
	}
	if res.completion != nil {
		if sh := *res.completion; sh != "bash" {
			fmt.Fprintf(stderr, "tripleo-agent: --completion: %q is not a shell it knows (bash)\n", sh)
			return exitcode.Usage
		}
		bashCompletion(stdout)
		return exitcode.OK
	}
	if res.man != nil {
		name := *res.man
		var page *argparse.Parser
		if name == "tripleo-agent" {
			page = agentCLI()
		} else if prog, ok := lookup(name); ok {
			page = prog.cli()
			page.Prog = name
		} else {
			fmt.Fprintf(stderr, "tripleo-agent: --man: unknown program %q; the programs are: %s\n", name, strings.Join(programNames(), ", "))
			return exitcode.Usage
		}
		date := manDate(getenv)
		io.WriteString(stdout, page.Man(date, argparse.ManSource("tripleo-agent", version.Package, date)))
		return exitcode.OK
	}
	return exitcode.OK
}

// manDate is the manual pages' date: $SOURCE_DATE_EPOCH's (reproducible
// builds), else the commit's, else none.
func manDate(getenv func(string) string) string {
	if s, err := strconv.ParseInt(getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil {
		return time.Unix(s, 0).UTC().Format("2006-01-02")
	}
	if t, err := time.Parse(time.RFC3339, version.Current().Time); err == nil {
		return t.UTC().Format("2006-01-02")
	}
	return ""
}
