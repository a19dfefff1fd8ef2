package config

import (
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/internal/secret"
)

// Option is one oslo.config option: where it is read from and where its
// value goes. Collectors declare their own; os-collect-config declares
// [DEFAULT]'s.
type Option struct {
	// Group is the INI section and the flag prefix ("" for [DEFAULT]).
	Group string
	// Name is the option as declared: its command-line spelling.
	Name string
	// Dest is its key in files, when not Name with "-" as "_".
	Dest  string
	Short string
	// Default is its value when nothing sets it (nil: None).
	Default []string
	// Aliases are deprecated names, accepted in files and flags.
	Aliases []string
	// Positional takes the positional arguments (the collectors).
	Positional bool
	// NonNegative refuses values below zero (our own options; the
	// reference's take what oslo.config takes).
	NonNegative bool
	// Help says what the option does, in words: the help (--help) and
	// the manual page are made from it.
	Help string
	// Into is where the value goes, and its type says how it is read:
	// *string, *secret.String (never printed), *[]string (a MultiStrOpt:
	// repeated keys or flags, all kept), *float64, *int or *bool.
	Into any
}

// InGroup puts options in group.
func InGroup(group string, opts ...Option) []Option {
	for i := range opts {
		opts[i].Group = group
	}
	return opts
}

// kind is how an option's value is read.
type kind int

const (
	str kind = iota
	float
	integer
	boolean
	multi
)

func (o *Option) kind() kind {
	switch o.Into.(type) {
	case *float64:
		return float
	case *int:
		return integer
	case *bool:
		return boolean
	case *[]string:
		return multi
	case *string, *secret.String:
		return str
	}
	panic(fmt.Sprintf("option %s: unsupported destination %T", o.label(), o.Into))
}

func (o *Option) secret() bool {
	_, ok := o.Into.(*secret.String)
	return ok
}

// key is the option's "GROUP.dest", as oslo.config reports it.
func (o *Option) key() string {
	dest := o.Dest
	if dest == "" {
		dest = strings.ReplaceAll(o.Name, "-", "_")
	}
	return o.groupName() + "." + dest
}

func (o *Option) groupName() string {
	if o.Group == "" {
		return "DEFAULT"
	}
	return o.Group
}

// label names the option in messages.
func (o *Option) label() string {
	if o.Group == "" {
		return o.Name
	}
	return o.Group + "." + o.Name
}

// flag is the command-line spelling of name without dashes.
func (o *Option) flag(name string) string {
	if o.Group == "" {
		return name
	}
	return o.Group + "-" + name
}

// shown is how a value appears in a message: never a secret's, nor a
// URL's query (a pre-signed URL's signature) or user info.
func (o *Option) shown(vals []string) string {
	if o.secret() {
		return secret.Redacted
	}
	return secret.RedactText(strings.Join(vals, ","))
}
