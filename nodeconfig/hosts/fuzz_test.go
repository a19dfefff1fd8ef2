package hosts

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// hostsInput is one fuzz input: the JSON of the hosts value, the node's
// /etc/hosts and its cloud-init template for Debian ("" for none).
type hostsInput struct {
	value, hosts, template string
}

var hostsSeeds = []hostsInput{
	{`"192.0.2.1 Node0.Example.COM node0\n192.0.2.2 node1"`, localhost, ""},
	{`"192.0.2.1 a\\n192.0.2.2 b\\n\\n192.0.2.3 c\\n"`, localhost, "## template:jinja\n127.0.0.1 {{fqdn}}\n"},
	{`"\n192.0.2.1 a\n\n192.0.2.2 b\n\n"`, localhost + section + "10.0.0.1 kept\n", ""},
	{`"192.0.2.1 new"`, localhost + "# HEAT_HOSTS_START\n192.0.2.9 old\n10.0.0.1 lost\n", ""},
	{`"192.0.2.1 new"`, "# HEAT_HOSTS_END\n" + localhost + section + "10.0.0.1 kept", ""},
	{`"192.0.2.9 old"`, localhost + section, section},
	{`"192.0.2.1 a"`, "127.0.0.1 localhost", ""},
	{`"192.0.2.1\ta\tb"`, localhost, ""},
	{`""`, localhost, ""},
	{`"\n\n"`, localhost, ""},
	{`null`, localhost, ""},
	{`["192.0.2.1 a"]`, localhost, ""},
	{`5`, localhost, ""},
	{`{"a": "b"}`, localhost, ""},
	{`"192.0.2.1 a\u0000b"`, localhost, ""},
	{`"192.0.2.1 a\r\n192.0.2.2 b\r\n"`, localhost, "127.0.0.1 {{fqdn}}\n"},
	{`"192.0.2.1 a\u001bb"`, localhost, ""},
	{`"192.0.2.1 caf\u00e9 \u00c9T\u00c9"`, localhost, ""},
	{`"192.0.2.1 a"`, "", ""},
	{`"192.0.2.1 a"`, localhost + "# HEAT_HOSTS_START x\n# HEAT_HOSTS_START y\n# HEAT_HOSTS_END\n# HEAT_HOSTS_END\ntail\n", ""},
}

// FuzzHosts runs 51-hosts on a fuzzed hosts value, /etc/hosts and
// cloud-init's template, with a recording fake of lsb_release. A value
// that is not a string, or holds a control character other than tab and
// newline, is one error line naming the key: no command runs and
// nothing under the root is touched; no entries is a message, and
// nothing touched either. Otherwise each file there gets the section as
// the reference's seds and echos make it. With FUZZ_REFERENCE=1
// (TRIPLEO_IMAGE_ELEMENTS, as root) each input the step takes is also
// run by the reference's script and must leave the same.
func FuzzHosts(f *testing.F) {
	for _, s := range hostsSeeds {
		f.Add(s.value, s.hosts, s.template)
	}
	var script string
	if os.Getenv("FUZZ_REFERENCE") == "1" {
		script = nodeconfigtest.Reference(f, referenceScript)
	}
	f.Fuzz(func(t *testing.T, value, hosts, template string) {
		checkHosts(t, script, hostsInput{value, hosts, template})
	})
}

const referenceScript = "elements/hosts/os-refresh-config/configure.d/51-hosts"

// TestHostsSeedsAgainstReference compares the seeds and the kept inputs
// of FuzzHosts (with FUZZ_GENERATED=1, also those the fuzzer kept in the
// build cache) with the reference's script.
func TestHostsSeedsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	script := nodeconfigtest.Reference(t, referenceScript)
	inputs := append([]hostsInput(nil), hostsSeeds...)
	for _, vals := range difftest.FuzzCorpus(t, "FuzzHosts") {
		inputs = append(inputs, hostsInput{vals[0].(string), vals[1].(string), vals[2].(string)})
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkHosts(t, script, in) })
	}
	t.Logf("%d inputs compared", len(inputs))
}

func checkHosts(t *testing.T, script string, in hostsInput) {
	md := `{"hosts": ` + in.value + `}`
	v, err := jsondoc.Loads([]byte(md))
	doc, ok := v.(*jsondoc.Object)
	if err != nil || !ok {
		return // not metadata
	}
	c := nodeconfigtest.Case{Name: "fuzz", Metadata: md, Files: map[string]string{HostsFile: "0644:" + in.hosts}}
	if in.template != "" {
		c.Files[debian] = "0644:" + in.template
	}
	r := nodeconfigtest.Run(t, c, Run)
	unchanged := func() {
		t.Helper()
		if r.Commands != "" || r.After != r.Before {
			t.Fatalf("%s: something changed: commands %q, root:\n%s", md, r.Commands, difftest.LineDiff(r.Before, r.After))
		}
	}

	hv, found := metadata.Lookup(doc, Key)
	text, isString := hv.(string)
	if found && !isString || strings.ContainsFunc(text, func(r rune) bool { return r < ' ' && r != '\t' && r != '\n' || r == 0x7f }) {
		if exitcode.Of(r.Err) != exitcode.Failure || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 ||
			!strings.HasPrefix(r.Stderr, Name+": ERROR: "+Key+" ") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want one error line naming %s", md, exitcode.Of(r.Err), r.Stdout, r.Stderr, Key)
		}
		unchanged()
		return
	}
	entries := sedEntries(text)
	if entries == "" {
		if r.Err != nil || r.Stdout != "No hosts in Heat, nothing written.\n" {
			t.Fatalf("%s: no entries: exit %d, stdout %q", md, exitcode.Of(r.Err), r.Stdout)
		}
		unchanged()
		return
	}
	if r.Err != nil || r.Commands != "lsb_release -is\n" {
		t.Fatalf("%s: exit %d (%v), commands %q", md, exitcode.Of(r.Err), r.Err, r.Commands)
	}
	want := []string{fmt.Sprintf("  %s 0644 %q\n", HostsFile, withSection(in.hosts, entries))}
	if in.template != "" {
		want = append([]string{fmt.Sprintf("  %s 0644 %q\n", debian, withSection(in.template, entries))}, want...)
	}
	if !strings.HasSuffix(r.Text, "files:\n"+strings.Join(want, "")) {
		t.Fatalf("%s on %q:\n%s\nwant the files\n%s", md, in.hosts, r.Text, strings.Join(want, ""))
	}
	if script == "" || echoOption.MatchString(entries) {
		return // the reference's echo "$entries" took "-n" for an option (docs/compat.md)
	}
	if ref := nodeconfigtest.RunReference(t, c, script, ""); ref != r.Text {
		t.Fatalf("%s on %q:\n--- reference\n%s--- ours\n%s", md, in.hosts, ref, r.Text)
	}
}

// sedEntries is the reference's ENTRIES=$(... | tr '[A-Z]' '[a-z]' |
// sed -e 's/\\n/\n/g' -e '/^$/d'): ASCII lower case, each line's \n
// pairs made line breaks, empty lines dropped, final line breaks gone.
func sedEntries(v string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(v, "\n"), "\n") {
		if line == "" {
			continue
		}
		for _, c := range []byte(strings.ReplaceAll(line, `\n`, "\n")) {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// echoOption is what bash's echo takes for its options, not text.
var echoOption = regexp.MustCompile(`^-[neE]+$`)

var (
	startLineRe = regexp.MustCompile(`(?m)^# HEAT_HOSTS_START`)
	endLineRe   = regexp.MustCompile(`^# HEAT_HOSTS_END`)
)

// withSection is the file as the reference's write_entries leaves it:
// with a START line, sed '/^# HEAT_HOSTS_START/,$d' then the section
// then sed '1,/^# HEAT_HOSTS_END/d' (the END looked for from the second
// line on); without, the section appended after an empty line.
func withSection(file, entries string) string {
	section := "# HEAT_HOSTS_START - Do not edit manually within this section!\n" + entries + "\n# HEAT_HOSTS_END\n"
	loc := startLineRe.FindStringIndex(file)
	if loc == nil {
		return file + "\n" + section + "\n"
	}
	var tail strings.Builder
	lines := strings.SplitAfter(file, "\n")
	for i := 1; i < len(lines); i++ {
		if endLineRe.MatchString(lines[i]) {
			tail.WriteString(strings.Join(lines[i+1:], ""))
			break
		}
	}
	return file[:loc[0]] + section + tail.String() // GNU sed keeps a missing final newline
}
