package sysctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/nodeconfig"
)

// RunAppend is sysctl-append-value NAME VALUE [COMMENT]: adds VALUE to
// the comma-separated list the parameter's file holds (or starts it),
// for image builds; it neither checks nor loads the parameter.
//
// The bytes are the reference's, which passed its arguments on to
// sysctl-write-value unquoted: the comment line keeps the first word of
// the comment only ("# This" by default). A value that word splitting
// would have cut is refused instead of written cut.
func RunAppend(_ context.Context, args []string, env nodeconfig.Env) error {
	log := env.Logger("sysctl-append-value")
	name, add, comment := arg(args, 0), arg(args, 1), arg(args, 2)
	if comment == "" {
		comment = DefaultComment
	}
	if name == "" || add == "" {
		log.Error("Usage: sysctl-append-value <name> <new value> [comment]")
		return exitcode.With(exitcode.Failure, nil)
	}
	fail := func(err error) error {
		log.Error(fmt.Sprintf("%s: %v", nodeconfig.KeyText(name), err))
		return exitcode.With(exitcode.Failure, err)
	}
	if err := checkName(name); err != nil {
		return fail(err)
	}
	if strings.IndexFunc(add, isSpaceOrControl) >= 0 {
		return fail(fmt.Errorf("%q has white space or a control character", add))
	}
	text, exists, err := current(env, name)
	if err != nil {
		return fail(err)
	}
	value := add
	if exists {
		var found bool
		for _, l := range strings.SplitAfter(text, "\n") {
			if strings.Contains(l, add) {
				fmt.Fprint(env.Stdout, strings.TrimSuffix(l, "\n")+"\n")
				found = true
			}
		}
		if found {
			fmt.Fprintf(env.Stdout, "Info: %s already present in %s\n", add, name)
		}
		value = thirdField(lastLine(text)) + "," + add
	}
	// The comment as the shell split it: its first word, or the
	// default whole when it had none.
	if words := strings.Fields(comment); len(words) > 0 {
		comment = words[0]
	} else {
		comment = DefaultComment
	}
	if err := write(env, name, value, comment); err != nil {
		return fail(err)
	}
	return nil
}

// lastLine is what `tail -n 1` prints of text, without its newline.
func lastLine(text string) string {
	text = strings.TrimSuffix(text, "\n")
	return text[strings.LastIndexByte(text, '\n')+1:]
}

// thirdField is awk's $3: the third run of non-blanks (space or tab).
func thirdField(line string) string {
	f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(f) < 3 {
		return ""
	}
	return f[2]
}
