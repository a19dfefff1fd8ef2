// Package hosts is the hosts element's os-refresh-config step, 51-hosts:
// the metadata's "hosts" text goes between the HEAT_HOSTS_START and
// HEAT_HOSTS_END lines of /etc/hosts and of cloud-init's hosts template
// for the distribution (so that cloud-init, which rewrites /etc/hosts
// from the template at boot, keeps them), replacing what the section
// held, or in a new section at the end.
package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/nodeconfig"
)

// Name is the step's name.
const Name = "51-hosts"

// Key is the metadata key: the lines to put in the files, separated by
// newlines or by the two characters \n.
const Key = "hosts"

// The files (under nodeconfig.Env.Root); %s is the distribution.
const (
	HostsFile    = "/etc/hosts"
	TemplateFile = "/etc/cloud/templates/hosts.%s.tmpl"
)

// The section's lines.
const (
	startLine = "# HEAT_HOSTS_START - Do not edit manually within this section!\n"
	endLine   = "# HEAT_HOSTS_END\n"
)

// Run is the step. A hosts value that is not a string, or holds a
// control character other than tab and newline, is bad metadata: one
// error line naming the key, and nothing changes (no command run).
func Run(ctx context.Context, _ []string, env nodeconfig.Env) error {
	log := env.Logger(Name)
	fail := func(err error) error {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	v, found, err := env.Lookup(Key)
	if err != nil {
		return fail(err)
	}
	text, ok := v.(string)
	if found && !ok {
		return fail(fmt.Errorf("%s is %s, not a string", Key, jsondoc.KindOf(v)))
	}
	if err := checkText(text); err != nil {
		return fail(err)
	}
	entries := Entries(text)
	if entries == "" {
		fmt.Fprintln(env.Stdout, "No hosts in Heat, nothing written.")
		return nil
	}
	dist, err := distribution(ctx, env)
	if err != nil {
		return fail(err)
	}
	for _, f := range []string{fmt.Sprintf(TemplateFile, dist), HostsFile} {
		if err := writeEntries(ctx, env, env.Path(f), entries); err != nil {
			return fail(err)
		}
	}
	return nil
}

// checkText refuses a value with a byte a hosts file cannot hold: a NUL
// (which the reference's shell dropped), a carriage return (a CRLF value
// would end every name with one) or another control character; tab and
// newline separate fields and lines.
func checkText(text string) error {
	i := strings.IndexFunc(text, func(r rune) bool { return r < ' ' && r != '\t' && r != '\n' || r == 0x7f })
	if i < 0 {
		return nil
	}
	what := fmt.Sprintf("the control character %U", text[i])
	switch text[i] {
	case 0:
		what = "a NUL"
	case '\r':
		what = "a carriage return"
	}
	return fmt.Errorf("%s holds %s, which a hosts file cannot hold", Key, what)
}

// Entries is the text as the reference made it: lower case (ASCII
// letters), each \n (backslash, n) a line break, empty lines of the
// value dropped (not those a \n\n makes), no final line breaks.
func Entries(v string) string {
	v = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, v)
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l != "" {
			out = append(out, strings.ReplaceAll(l, `\n`, "\n"))
		}
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

// distribution names cloud-init's template: lsb_release -is in lower
// case, with fedora and redhatenterpriseserver as redhat.
func distribution(ctx context.Context, env nodeconfig.Env) (string, error) {
	var out bytes.Buffer
	if err := env.Command(ctx, &out, "lsb_release", "-is"); err != nil {
		return "", err
	}
	d := squeeze(strings.ToLower(strings.TrimRight(out.String(), "\n")))
	switch d {
	case "fedora", "redhatenterpriseserver":
		return "redhat", nil
	case "":
		return "", errors.New("lsb_release -is printed nothing")
	}
	if strings.ContainsAny(d, "/\n") {
		return "", fmt.Errorf("lsb_release -is printed %q", d)
	}
	return d, nil
}

// squeeze is tr -s on the lower-case letters: a run of one letter is one.
func squeeze(s string) string {
	var b strings.Builder
	var prev rune = -1
	for _, r := range s {
		if r == prev && r >= 'a' && r <= 'z' {
			continue
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

var (
	startRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^# HEAT_HOSTS_START`) })
	endRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^# HEAT_HOSTS_END`) })
)

// writeEntries puts the section in the file, if there is a file (a link
// is followed: the file it points to is replaced).
func writeEntries(ctx context.Context, env nodeconfig.Env, file, entries string) error {
	path := nodeconfig.Resolve(file)
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	old := string(data)
	section := startLine + entries + "\n" + endLine
	var now string
	if startRe().MatchString(old) {
		now = replace(old, section)
		fmt.Fprintf(env.Stdout, "INFO: Updating hosts file %s, check below for changes\n", strings.TrimPrefix(file, env.Root))
		if _, err := env.LookPath("diff"); err == nil {
			// diff exits 1 when the files differ: not a failure.
			_ = showDiff(ctx, env, path, now)
		}
	} else {
		now = old + "\n" + section + "\n"
	}
	if now == old {
		return nil
	}
	if err := nodeconfig.WriteFile(path, []byte(now), st.Mode().Perm()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// replace is old with the section in place of the lines from the first
// START line to the first END line after it (to the end when there is
// none), as the reference's two seds cut it.
func replace(old, section string) string {
	lines := strings.SplitAfter(old, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "# HEAT_HOSTS_START") {
			start = i
			break
		}
	}
	var b strings.Builder
	for _, l := range lines[:start] {
		b.WriteString(l)
	}
	b.WriteString(section)
	// sed '1,/END/d': the end is looked for from the second line on.
	for i := 1; i < len(lines); i++ {
		if endRe().MatchString(lines[i]) {
			for _, l := range lines[i+1:] {
				b.WriteString(l)
			}
			break
		}
	}
	return b.String()
}
