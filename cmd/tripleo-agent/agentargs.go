package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// agentArgs are tripleo-agent's own options, parsed; man and completion
// are nil when absent.
type agentArgs struct {
	help, version   bool
	man, completion *string
}

// parseAgentArgs reads tripleo-agent's own options with the standard
// library's flag: the dispatcher has no Python ancestor, so argparse's
// rules (abbreviations) have nothing to keep compatible. agentCLI still
// describes the options, for the help and the manual page. The usage
// errors keep argparse's words.
func parseAgentArgs(args []string) (agentArgs, error) {
	var a agentArgs
	var man, completion string
	fs := flag.NewFlagSet("tripleo-agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&a.help, "h", false, "")
	fs.BoolVar(&a.help, "help", false, "")
	fs.BoolVar(&a.version, "version", false, "")
	fs.StringVar(&man, "man", "", "")
	fs.StringVar(&completion, "completion", "", "")
	if err := fs.Parse(args); err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			return a, errors.New("unrecognized arguments: " + dashed(name))
		}
		if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
			return a, fmt.Errorf("argument %s: expected one argument", dashed(name))
		}
		return a, err
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("unrecognized arguments: %s", strings.Join(fs.Args(), " "))
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "man":
			a.man = &man
		case "completion":
			a.completion = &completion
		}
	})
	return a, nil
}

// dashed is a flag's name as it was spelled: "--man", "-x".
func dashed(name string) string {
	if len(name) > 1 {
		return "--" + name
	}
	return "-" + name
}
