package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/internal/argparse"
)

// bashCompletion is a bash completion script for tripleo-agent and each
// of its programs, made from the parsers their help comes from: options
// after a dash, an option's choices after it (--format, --type,
// --log-level; after "--opt=" too), file names after the other options
// taking a value, the collectors for os-collect-config's other words,
// the programs for tripleo-agent's first.
func bashCompletion(w io.Writer) {
	fmt.Fprintln(w, "# bash completion for tripleo-agent and its programs; made by tripleo-agent --completion bash")
	fmt.Fprintln(w, "_tripleo_agent() {")
	fmt.Fprintln(w, `	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} prog=${1##*/} opts= valued= words= choices=`)
	// bash splits "--format=js" into "--format", "=" and "js".
	fmt.Fprintln(w, `	if [[ $cur == = ]]; then cur=; elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi`)
	fmt.Fprintln(w, `	if [[ $prog == tripleo-agent && $COMP_CWORD -ge 2 && -n ${COMP_WORDS[1]} && ${COMP_WORDS[1]} != -* ]]; then prog=${COMP_WORDS[1]}; fi`)
	fmt.Fprintln(w, `	case $prog in`)
	names := append(programNames(), "tripleo-agent")
	for _, name := range names {
		var p *argparse.Parser
		if name == "tripleo-agent" {
			p = agentCLI()
		} else {
			prog, _ := lookup(name)
			p = prog.cli()
		}
		opts, valued := optionWords(p)
		words := ""
		switch name {
		case "tripleo-agent":
			words = strings.Join(programNames(), " ")
		case "os-collect-config":
			words = strings.Join(occ.Collectors(), " ")
		}
		fmt.Fprintf(w, "\t%s) opts=%q valued=%q words=%q", name, strings.Join(opts, " "), " "+strings.Join(valued, " ")+" ", words)
		if cs := choiceCases(p); cs != "" {
			fmt.Fprintf(w, "\n\t\tcase $prev in %s esac", cs)
		}
		fmt.Fprintln(w, " ;;")
	}
	fmt.Fprintln(w, `	*) return ;;`)
	fmt.Fprintln(w, `	esac`)
	// An option's choices, and no file name when none matches.
	fmt.Fprintln(w, `	if [[ -n $choices ]]; then compopt +o default 2>/dev/null; COMPREPLY=($(compgen -W "$choices" -- "$cur")); return; fi`)
	fmt.Fprintln(w, `	if [[ $valued == *" $prev "* ]]; then COMPREPLY=(); return; fi`)
	fmt.Fprintln(w, `	if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); return; fi`)
	fmt.Fprintln(w, `	COMPREPLY=($(compgen -W "$words" -- "$cur"))`)
	fmt.Fprintln(w, "}")
	// Only the names in bin: a hook's name (script, puppet, ansible) is
	// another tool's on the PATH.
	fmt.Fprintf(w, "complete -o default -F _tripleo_agent %s\n", strings.Join(binPrograms(), " "))
}

// optionWords are every spelling of the parser's options, and those of
// the ones that take a value.
func optionWords(p *argparse.Parser) (opts, valued []string) {
	opts = []string{"-h", "--help"}
	if p.Version != "" {
		opts = append(opts, "--version")
	}
	for _, o := range p.Options {
		opts = append(opts, o.Names...)
		if o.Kind != argparse.Flag {
			valued = append(valued, o.Names...)
		}
	}
	slices.Sort(opts)
	return slices.Compact(opts), valued
}

// choiceCases are the arms of a bash case on the previous word that set
// choices for the parser's options that have them ("" for none).
func choiceCases(p *argparse.Parser) string {
	var arms []string
	for _, o := range p.Options {
		if len(o.Choices) > 0 {
			arms = append(arms, fmt.Sprintf("%s) choices=%q ;;", strings.Join(o.Names, "|"), strings.Join(o.Choices, " ")))
		}
	}
	return strings.Join(arms, " ")
}
