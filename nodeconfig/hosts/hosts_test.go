package hosts

import (
	"testing"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

const (
	localhost = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n"
	debian    = "/etc/cloud/templates/hosts.debian.tmpl"
	redhat    = "/etc/cloud/templates/hosts.redhat.tmpl"
	section   = "# HEAT_HOSTS_START - Do not edit manually within this section!\n192.0.2.9 old\n# HEAT_HOSTS_END\n"
)

// The metadata inputs; the reference's results are
// testdata/golden/<name>.txt (testdata/README.md).
var cases = []nodeconfigtest.Case{
	{Name: "no-key", Metadata: `{"sysctl": {}}`, Files: map[string]string{HostsFile: localhost}},
	{Name: "empty", Metadata: `{"hosts": ""}`, Files: map[string]string{HostsFile: localhost}},
	{Name: "blank-lines", Metadata: `{"hosts": "\n\n"}`, Files: map[string]string{HostsFile: localhost}},
	{Name: "append", Metadata: `{"hosts": "192.0.2.1 Node0.Example.COM node0\n192.0.2.2 node1"}`,
		Files: map[string]string{HostsFile: localhost}},
	{Name: "escaped-newlines", Metadata: `{"hosts": "192.0.2.1 a\\n192.0.2.2 b\\n\\n192.0.2.3 c\\n"}`,
		Files: map[string]string{HostsFile: localhost}},
	{Name: "empty-lines-in-value", Metadata: `{"hosts": "\n192.0.2.1 a\n\n192.0.2.2 b\n\n"}`,
		Files: map[string]string{HostsFile: localhost}},
	{Name: "replace", Metadata: `{"hosts": "192.0.2.1 new"}`,
		Files: map[string]string{HostsFile: "0600:" + localhost + section + "10.0.0.1 kept\n"}},
	{Name: "replace-no-end", Metadata: `{"hosts": "192.0.2.1 new"}`,
		Files: map[string]string{HostsFile: localhost + "# HEAT_HOSTS_START\n192.0.2.9 old\n10.0.0.1 lost\n"}},
	{Name: "end-first", Metadata: `{"hosts": "192.0.2.1 new"}`,
		Files: map[string]string{HostsFile: "# HEAT_HOSTS_END\n" + localhost + section + "10.0.0.1 kept"}},
	{Name: "unchanged", Metadata: `{"hosts": "192.0.2.9 old"}`,
		Files: map[string]string{HostsFile: localhost + section}},
	{Name: "no-final-newline", Metadata: `{"hosts": "192.0.2.1 a"}`,
		Files: map[string]string{HostsFile: "127.0.0.1 localhost"}},
	{Name: "cloud-template", Metadata: `{"hosts": "192.0.2.1 a"}`,
		Files: map[string]string{HostsFile: localhost, debian: "## template:jinja\n127.0.0.1 {{fqdn}}\n", redhat: "untouched\n"}},
	{Name: "fedora-template", Metadata: `{"hosts": "192.0.2.1 a"}`, Dist: "Fedora",
		Files: map[string]string{HostsFile: localhost, redhat: "## template:jinja\n"}},
	{Name: "no-hosts-file", Metadata: `{"hosts": "192.0.2.1 a"}`, Dirs: []string{"/etc/cloud/templates"}},
	{Name: "a-list", Metadata: `{"hosts": ["192.0.2.1 a"]}`, Files: map[string]string{HostsFile: localhost},
		Differs: `the reference writes the list's JSON, ["192.0.2.1 a"], into the section; ours refuses what is not a string`},
	{Name: "a-number", Metadata: `{"hosts": 5}`, Files: map[string]string{HostsFile: localhost},
		Differs: `the reference writes 5 into the section; ours refuses what is not a string`},
	{Name: "nul", Metadata: `{"hosts": "192.0.2.1 a\u0000b"}`, Files: map[string]string{HostsFile: localhost},
		Differs: `bash drops the NUL (a warning) and the reference writes "192.0.2.1 ab"; ours refuses the value`},
	{Name: "carriage-return", Metadata: `{"hosts": "192.0.2.1 a\r\n192.0.2.2 b\r\n"}`,
		Files:   map[string]string{HostsFile: localhost, debian: "127.0.0.1 {{fqdn}}\n"},
		Differs: `the reference writes the CRs, so each name ends in one; ours refuses the value`},
	{Name: "escape-character", Metadata: `{"hosts": "192.0.2.1 a\u001bb"}`, Files: map[string]string{HostsFile: localhost},
		Differs: `the reference writes the ESC; ours refuses a control character other than tab and newline`},
	{Name: "echo-option", Metadata: `{"hosts": "-n"}`, Files: map[string]string{HostsFile: localhost},
		Differs: `the reference's echo "$ENTRIES" takes -n for its option and writes an empty section; ours writes the entry`},
	{Name: "tab", Metadata: `{"hosts": "192.0.2.1\ta\tb"}`, Files: map[string]string{HostsFile: localhost}},
}

// The one error line of each refusal names the key and what it holds.
func TestErrorLines(t *testing.T) {
	for _, c := range []struct{ name, metadata, want string }{
		{"a-list", `{"hosts": ["192.0.2.1 a"]}`, "hosts is a list, not a string"},
		{"a-number", `{"hosts": 5}`, "hosts is a number, not a string"},
		{"an-object", `{"hosts": {"a": "192.0.2.1"}}`, "hosts is an object, not a string"},
		{"nul", `{"hosts": "192.0.2.1 a\u0000b"}`, "hosts holds a NUL, which a hosts file cannot hold"},
		{"carriage-return", `{"hosts": "192.0.2.1 a\r\n"}`, "hosts holds a carriage return, which a hosts file cannot hold"},
		{"escape-character", `{"hosts": "192.0.2.1 a\u001bb"}`, "hosts holds the control character U+001B, which a hosts file cannot hold"},
		{"delete", `{"hosts": "192.0.2.1 a\u007f"}`, "hosts holds the control character U+007F, which a hosts file cannot hold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := nodeconfigtest.Run(t, nodeconfigtest.Case{Name: c.name, Metadata: c.metadata,
				Files: map[string]string{HostsFile: localhost, debian: "127.0.0.1 {{fqdn}}\n"}}, Run)
			want := Name + ": ERROR: " + c.want + "\n"
			if exitcode.Of(r.Err) != exitcode.Failure || r.Stderr != want || r.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", exitcode.Of(r.Err), r.Stdout, r.Stderr, want)
			}
			if r.Commands != "" || r.After != r.Before {
				t.Errorf("something changed: commands %q, root:\n%s", r.Commands, difftest.LineDiff(r.Before, r.After))
			}
		})
	}
}

func TestLikeTheReference(t *testing.T) {
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			nodeconfigtest.Golden(t, c.Name, nodeconfigtest.Suffix(c), nodeconfigtest.RunOurs(t, c, Run), true)
		})
	}
}

func TestReferenceDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	script := nodeconfigtest.Reference(t, "elements/hosts/os-refresh-config/configure.d/51-hosts")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			nodeconfigtest.Golden(t, c.Name, "", nodeconfigtest.RunReference(t, c, script, ""), false)
		})
	}
}

// The value's text as the reference's tr and sed made it.
func TestEntries(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"A b":                "a b",
		`x\ny`:               "x\ny",
		"\n\nx\n\ny\n\n":     "x\ny",
		`x\n\ny`:             "x\n\ny",
		`x\n`:                "x",
		"Ünïcode ABC":        "Ünïcode abc",
		"192.0.2.1 a\\n\n\n": "192.0.2.1 a",
	} {
		if got := Entries(in); got != want {
			t.Errorf("Entries(%q) = %q, want %q", in, got, want)
		}
	}
}
