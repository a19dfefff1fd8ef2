package argparse

import (
	"fmt"
	"io"
	"strings"
)

// Manual is what a program's manual page says beyond its help: the
// manual is made from the same Parser as the help (Man), so that the two
// cannot drift.
type Manual struct {
	// Summary is the NAME line's description, one short phrase.
	Summary string
	// Synopsis replaces the usage in the SYNOPSIS section (lines), for
	// programs whose arguments the options do not tell.
	Synopsis []string
	// Sections follow OPTIONS: ENVIRONMENT, FILES, EXIT STATUS, SEE ALSO...
	Sections []Section
}

// Section is a manual section: paragraphs, then tagged items.
type Section struct {
	Title      string
	Paragraphs []string
	Items      []Item
}

// Item is a tagged paragraph: an environment variable, a file, a status.
type Item struct{ Tag, Text string }

// Man is the manual page (roff, man macros, section 1) of the program:
// NAME, SYNOPSIS, DESCRIPTION, OPTIONS (each option of the help, with
// its help), then the manual's own sections. date and source go in the
// title line (.TH).
func (p *Parser) Man(date, source string) string {
	var b strings.Builder
	name := strings.ToUpper(p.Prog)
	fmt.Fprintf(&b, ".TH %s 1 %s %s \"User Commands\"\n", quote(name), quote(date), quote(source))
	// No hyphenation, ragged right: option names must not break at
	// their hyphens.
	b.WriteString(".nh\n.ad l\n")
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", roffText(p.Prog), roffText(p.Manual.Summary))
	b.WriteString(".SH SYNOPSIS\n")
	if len(p.Manual.Synopsis) > 0 {
		for i, l := range p.Manual.Synopsis {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(roffLine(l))
		}
	} else {
		fmt.Fprintf(&b, ".B %s\n", roffText(p.Prog))
		parts := []string{"[-h]"}
		if p.Version != "" {
			parts = append(parts, "[--version]")
		}
		if len(p.Options) > manySynopsisOptions {
			parts = append(parts, "[OPTION ...]")
		} else {
			for _, o := range p.Options {
				parts = append(parts, "["+o.Spellings()[0]+"]")
			}
		}
		if p.Positional != "" {
			parts = append(parts, "["+p.Positional+" ...]")
		}
		b.WriteString(roffLine(strings.Join(parts, " ")))
	}
	if p.Description != "" {
		b.WriteString(".SH DESCRIPTION\n")
		paragraphs(&b, strings.Split(p.Description, "\n\n"))
	}
	if p.Positional != "" {
		b.WriteString(".SH ARGUMENTS\n")
		tagged(&b, "\\fI"+roffText(p.Positional)+"\\fR ...", p.PositionalHelp)
	}
	b.WriteString(".SH OPTIONS\n")
	tagged(&b, option("-h, --help"), "Show the help and exit.")
	if p.Version != "" {
		tagged(&b, option("--version"), p.versionHelp())
	}
	group := ""
	for _, o := range p.Options {
		if o.Group != group {
			group = o.Group
			fmt.Fprintf(&b, ".SS %s\n", roffText(group))
		}
		tagged(&b, option(strings.Join(o.Spellings(), ", ")), o.Help)
	}
	for _, s := range p.Manual.Sections {
		fmt.Fprintf(&b, ".SH %s\n", roffText(strings.ToUpper(s.Title)))
		paragraphs(&b, s.Paragraphs)
		for _, it := range s.Items {
			tagged(&b, "\\fB"+roffText(it.Tag)+"\\fR", it.Text)
		}
	}
	return b.String()
}

// footerWidth is the line man lays a page out in on 80 columns
// (MANWIDTH=80 gives 78).
const footerWidth = 78

// ManSource is the .TH source (the footer's left part) of a page of the
// package name at version: "name version", else the version alone, else
// the name, the first that ends two columns before the date. man centres
// the date in the footer whatever the left part's length, so a longer
// one (a snapshot's "tripleo-agent 0.0~git20261125.0123456-1") runs into
// it.
func ManSource(name, version, date string) string {
	room := (footerWidth-len(date))/2 - 2
	for _, s := range []string{strings.TrimSpace(name + " " + version), version} {
		if s != "" && len(s) <= room {
			return s
		}
	}
	return name
}

// manySynopsisOptions is where the synopsis stops listing the options
// (os-collect-config has 72) and says [OPTION ...].
const manySynopsisOptions = 16

func paragraphs(b *strings.Builder, ps []string) {
	for i, para := range ps {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roffLine(para))
	}
}

func tagged(b *strings.Builder, tag, text string) {
	b.WriteString(".TP\n")
	b.WriteString(tag + "\n")
	if strings.TrimSpace(text) == "" {
		text = "(no description)"
	}
	// Help lines start lower case and end bare, as argparse's; a
	// manual's are sentences.
	text = strings.ToUpper(text[:1]) + text[1:]
	if !strings.HasSuffix(text, ".") {
		text += "."
	}
	b.WriteString(roffLine(text))
}

// option is an option's spellings: names bold, metavars italic.
func option(spellings string) string {
	var out []string
	for _, sp := range strings.Split(spellings, ", ") {
		name, meta, ok := strings.Cut(sp, " ")
		s := "\\fB" + roffText(name) + "\\fR"
		if ok {
			s += " \\fI" + roffText(meta) + "\\fR"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// roffText escapes text for roff: backslashes, and hyphens as minus
// signs (options are typed with ASCII hyphens).
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine is text as one filled roff input line (joined; a leading
// period or quote guarded), ending in a newline.
func roffLine(s string) string {
	s = roffText(strings.Join(strings.Fields(s), " "))
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s + "\n"
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `'`) + `"`
}

// versionHelp says what --version prints.
func (p *Parser) versionHelp() string {
	if p.Build != "" {
		return "show the version of the Python programs matched (" + p.Version + ") on stdout, then this build's version and commit on stderr, and exit"
	}
	return "show the version and exit"
}

// Answer answers -h/--help and --version for a program that reads its
// arguments itself (before a "--"): it writes the help or the version to
// stdout and reports true, and the program must then do nothing else.
func (p *Parser) Answer(args []string, stdout io.Writer) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-h" || a == "--help":
			io.WriteString(stdout, p.Help())
			return true
		case a == "--version" && p.Version != "":
			fmt.Fprintln(stdout, p.Version)
			if p.Build != "" && p.Stderr != nil {
				fmt.Fprintln(p.Stderr, p.Build)
			}
			return true
		}
	}
	return false
}
