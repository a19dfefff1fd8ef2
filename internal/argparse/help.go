package argparse

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tripleo-go/agent/internal/textwrap"
)

// Usage is argparse's usage, wrapped as argparse wraps it: parts are
// added to a line while it fits in Columns-2, continuation lines indented
// under the first option.
func (p *Parser) Usage() string {
	parts := []string{p.Prog, "[-h]"}
	if p.Version != "" && !p.VersionNotInUsage {
		parts = append(parts, "[--version]")
	}
	for _, o := range p.Options {
		n := o.Names[0]
		switch o.Kind {
		case Flag:
			parts = append(parts, fmt.Sprintf("[%s]", n))
		case One, Append:
			parts = append(parts, fmt.Sprintf("[%s %s]", n, o.metavar()))
		case Many:
			parts = append(parts, fmt.Sprintf("[%s [%s ...]]", n, o.metavar()))
		}
	}
	if p.Positional != "" {
		parts = append(parts, fmt.Sprintf("[%s ...]", p.Positional))
	}
	const prefix = "usage: "
	cols := p.Columns
	if cols <= 0 {
		cols = 80
	}
	width := cols - 2
	oneLine := prefix + strings.Join(parts, " ")
	if len(oneLine) <= width {
		return oneLine
	}
	indent := strings.Repeat(" ", len(prefix)+len(p.Prog)+1)
	var lines []string
	var line []string
	lineLen := len(prefix) - 1
	for _, part := range parts {
		if lineLen+1+len(part) > width && len(line) > 0 {
			lines = append(lines, indent+strings.Join(line, " "))
			line, lineLen = nil, len(indent)-1
		}
		line = append(line, part)
		lineLen += len(part) + 1
	}
	lines = append(lines, indent+strings.Join(line, " "))
	lines[0] = prefix + lines[0][len(indent):]
	return strings.Join(lines, "\n")
}

// Columns is the width argparse uses: $COLUMNS when it is a positive
// number, else 80.
func Columns(lookup func(string) (string, bool)) int {
	if v, ok := lookup("COLUMNS"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			return n
		}
	}
	return 80
}

func (o *Option) metavar() string {
	if o.Metavar != "" {
		return o.Metavar
	}
	return strings.ToUpper(strings.ReplaceAll(strings.TrimLeft(o.Names[len(o.Names)-1], "-"), "-", "_"))
}

// Help is the text printed for -h: the usage, the description, then
// each option with its help wrapped to Columns, under its group's title.
func (p *Parser) Help() string {
	var b strings.Builder
	b.WriteString(p.Usage())
	b.WriteString("\n\n")
	if p.Description != "" {
		for _, para := range strings.Split(p.Description, "\n\n") {
			b.WriteString(strings.Join(wrap(para, p.columns()-2), "\n"))
			b.WriteString("\n\n")
		}
	}
	if p.Positional != "" {
		b.WriteString("positional arguments:\n")
		p.item(&b, p.Positional, p.PositionalHelp)
		b.WriteString("\n")
	}
	b.WriteString("options:\n")
	p.item(&b, "-h, --help", "show this help message and exit")
	if p.Version != "" {
		p.item(&b, "--version", p.versionHelp())
	}
	group := ""
	for _, o := range p.Options {
		if o.Group != group {
			group = o.Group
			fmt.Fprintf(&b, "\n%s:\n", group)
		}
		p.item(&b, strings.Join(o.Spellings(), ", "), o.Help)
	}
	return b.String()
}

// Spellings are the option's names with their metavar, as the help lists
// them ("-t TEMPLATE_ROOT", "--templates TEMPLATE_ROOT").
func (o *Option) Spellings() []string {
	var names []string
	for _, n := range o.Names {
		switch o.Kind {
		case Flag:
			names = append(names, n)
		case One, Append:
			names = append(names, n+" "+o.metavar())
		case Many:
			names = append(names, fmt.Sprintf("%s [%s ...]", n, o.metavar()))
		}
	}
	return names
}

func (p *Parser) columns() int {
	if p.Columns <= 0 {
		return 80
	}
	return p.Columns
}

// item writes one entry of the help: its names in a 24-column margin
// (on a line of their own when longer), then its help wrapped.
func (p *Parser) item(b *strings.Builder, left, help string) {
	left = "  " + left
	const margin = 24
	lines := wrap(help, max(p.columns()-2-margin, 11))
	if len(lines) == 0 {
		b.WriteString(strings.TrimRight(left, " ") + "\n")
		return
	}
	if len(left) < margin {
		fmt.Fprintf(b, "%-24s%s\n", left, lines[0])
		lines = lines[1:]
	} else {
		b.WriteString(left + "\n")
	}
	for _, l := range lines {
		b.WriteString(strings.Repeat(" ", margin) + l + "\n")
	}
}

// wrap breaks text into lines of at most width columns at spaces (a word
// longer than width stands alone).
func wrap(text string, width int) []string {
	return textwrap.Words(strings.Fields(text), width)
}
