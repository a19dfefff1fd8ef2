package sysctl

import (
	"strings"
	"testing"

	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

const forward = "/etc/sysctl.d/net.ipv4.ip_forward.conf"

// The metadata inputs of 10-sysctl-apply-config; the reference's results
// are testdata/golden/<name>.txt (testdata/README.md).
var applyCases = []nodeconfigtest.Case{
	{Name: "apply-no-metadata"},
	{Name: "apply-no-key", Metadata: `{"hosts": "192.0.2.1 a"}`},
	{Name: "apply-null", Metadata: `{"sysctl": null}`},
	{Name: "apply-empty-object", Metadata: `{"sysctl": {}}`},
	{Name: "apply-numbers", Metadata: `{"sysctl": {"vm.swappiness": 10, "net.ipv4.ip_forward": 1, "kernel.pid_max": 65536.0}}`},
	{Name: "apply-already-set", Metadata: `{"sysctl": {"net.ipv4.ip_forward": 1}}`,
		Files: map[string]string{forward: "0600:# set by hand\nnet.ipv4.ip_forward = 1\n"}},
	{Name: "apply-not-an-object", Metadata: `{"sysctl": "net.ipv4.ip_forward=1"}`},
	{Name: "apply-a-list", Metadata: `{"sysctl": [1, 2]}`},
	{Name: "apply-string-value", Metadata: `{"sysctl": {"net.core.somaxconn": "1024"}}`,
		Differs: `jq 1.6's -r -a prints a string quoted: the reference writes "1024", which the kernel refuses, and leaves the file`},
	{Name: "apply-conflict", Metadata: `{"sysctl": {"kernel.pid_max": 65536, "net.ipv4.ip_forward": 1}}`,
		Files:   map[string]string{forward: "# x\nnet.ipv4.ip_forward = 0\n"},
		Differs: "the reference sets kernel.pid_max, then stops at the conflict; ours checks every key first and changes nothing"},
	{Name: "apply-unknown-key", Metadata: `{"sysctl": {"kernel.pid_max": 65536, "no.such.key": 1}}`,
		Differs: "the reference sets kernel.pid_max, then stops at the unknown key; ours changes nothing"},
	{Name: "apply-key-prefix", Metadata: `{"sysctl": {"net.ipv4": 1}}`,
		Differs: "the reference's grep takes a prefix of a known name (and any character for a dot) as a name"},
	{Name: "apply-null-value", Metadata: `{"sysctl": {"vm.swappiness": null}}`,
		Differs: `the reference writes "vm.swappiness = null"; ours refuses a value that is not a string or a number`},
	{Name: "apply-refused-value", Metadata: `{"sysctl": {"vm.swappiness": "bad"}}`,
		Differs: `the reference writes the value quoted (jq 1.6) and keeps the file the kernel refused; ours removes it`},
	// The rows run with jq 1.5's -r, which TripleO's nodes had.
	{Name: "apply-string-value-jq15", Metadata: `{"sysctl": {"net.core.somaxconn": "1024"}}`, JQ15: true},
	{Name: "apply-float-forms", Metadata: `{"sysctl": {"kernel.pid_max": 1e16, "vm.swappiness": 1.5e16, "net.core.somaxconn": 0.00001, "net.ipv4.ip_forward": -0.0}}`, JQ15: true},
	{Name: "apply-non-ascii", Metadata: `{"sysctl": {"kernel.domainname": "n\u00f6de"}}`, JQ15: true},
	{Name: "apply-line-break", Metadata: `{"sysctl": {"vm.swappiness": "10\nkernel.pid_max = 1"}}`, JQ15: true,
		Differs: "the reference writes the value's two lines, and its sysctl -p sets kernel.pid_max too; ours refuses a line break in a value"},
	{Name: "apply-leading-dot", Metadata: `{"sysctl": {".et.ipv4.ip_forward": 1}}`,
		Differs: "the reference's grep reads the dot as any character, takes the name for net.ipv4.ip_forward, writes the hidden /etc/sysctl.d/.et.ipv4.ip_forward.conf and loads it; ours refuses the name"},
	{Name: "apply-not-finite", Metadata: `{"sysctl": {"vm.swappiness": NaN}}`,
		Differs: "jq prints NaN as null: the reference writes vm.swappiness = null; ours refuses a number that is not finite"},
}

// The helpers' arguments and files.
var helperCases = []struct {
	prog string
	step nodeconfigtest.Step
	nodeconfigtest.Case
}{
	{"sysctl-write-value", RunWrite, nodeconfigtest.Case{Name: "write-new", Args: []string{"net.core.somaxconn", "1024"}}},
	{"sysctl-write-value", RunWrite, nodeconfigtest.Case{Name: "write-comment", Args: []string{"vm.swappiness", "10", "set for the database"}}},
	{"sysctl-write-value", RunWrite, nodeconfigtest.Case{Name: "write-over-private", Args: []string{"net.ipv4.ip_forward", "1"},
		Files: map[string]string{forward: "0600:net.ipv4.ip_forward = 0\n"}}},
	{"sysctl-write-value", RunWrite, nodeconfigtest.Case{Name: "write-no-value", Args: []string{"vm.swappiness"}}},
	{"sysctl-set-value", RunSet, nodeconfigtest.Case{Name: "set-new", Args: []string{"net.ipv4.ip_forward", "1"}}},
	{"sysctl-set-value", RunSet, nodeconfigtest.Case{Name: "set-same", Args: []string{"net.ipv4.ip_forward", "1"},
		Files: map[string]string{forward: "# x\nnet.ipv4.ip_forward = 1\n"}}},
	{"sysctl-set-value", RunSet, nodeconfigtest.Case{Name: "set-conflict", Args: []string{"net.ipv4.ip_forward", "1"},
		Files: map[string]string{forward: "# x\nnet.ipv4.ip_forward = 0\n"}}},
	{"sysctl-set-value", RunSet, nodeconfigtest.Case{Name: "set-unknown", Args: []string{"no.such.key", "1"}}},
	{"sysctl-set-value", RunSet, nodeconfigtest.Case{Name: "set-no-value", Args: []string{"net.ipv4.ip_forward"}}},
	{"sysctl-append-value", RunAppend, nodeconfigtest.Case{Name: "append-new", Args: []string{"net.ipv4.ip_local_reserved_ports", "35357"}}},
	{"sysctl-append-value", RunAppend, nodeconfigtest.Case{Name: "append-existing", Args: []string{"net.ipv4.ip_local_reserved_ports", "35358", "more ports"},
		Files: map[string]string{"/etc/sysctl.d/net.ipv4.ip_local_reserved_ports.conf": "# This\nnet.ipv4.ip_local_reserved_ports = 35357\n"}}},
	{"sysctl-append-value", RunAppend, nodeconfigtest.Case{Name: "append-present", Args: []string{"net.ipv4.ip_local_reserved_ports", "35357"},
		Files: map[string]string{"/etc/sysctl.d/net.ipv4.ip_local_reserved_ports.conf": "0640:# This\nnet.ipv4.ip_local_reserved_ports = 35357\n"}}},
	{"sysctl-append-value", RunAppend, nodeconfigtest.Case{Name: "append-no-value", Args: []string{"net.ipv4.ip_local_reserved_ports"}}},
}

// Ours leaves what the reference left (golden files), but where a row
// says why it deliberately differs.
func TestLikeTheReference(t *testing.T) {
	withDir()
	for _, c := range applyCases {
		t.Run(c.Name, func(t *testing.T) {
			got := nodeconfigtest.RunOurs(t, c, RunApply)
			nodeconfigtest.Golden(t, c.Name, nodeconfigtest.Suffix(c), got, true)
		})
	}
	for _, h := range helperCases {
		t.Run(h.Name, func(t *testing.T) {
			got := nodeconfigtest.RunOurs(t, h.Case, h.step)
			nodeconfigtest.Golden(t, h.Name, nodeconfigtest.Suffix(h.Case), got, true)
		})
	}
}

// The reference run again (TRIPLEO_IMAGE_ELEMENTS), compared with its
// golden files; with -update it writes them.
func TestReferenceDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reference")
	}
	withDir()
	apply := nodeconfigtest.Reference(t, "elements/sysctl/os-refresh-config/configure.d/10-sysctl-apply-config")
	bin := nodeconfigtest.Reference(t, "elements/sysctl/bin")
	for _, c := range applyCases {
		t.Run(c.Name, func(t *testing.T) {
			nodeconfigtest.Golden(t, c.Name, "", nodeconfigtest.RunReference(t, c, apply, bin), false)
		})
	}
	for _, h := range helperCases {
		t.Run(h.Name, func(t *testing.T) {
			nodeconfigtest.Golden(t, h.Name, "", nodeconfigtest.RunReference(t, h.Case, bin+"/"+h.prog, bin), false)
		})
	}
}

// withDir gives every case the directory a system has.
func withDir() {
	for i := range applyCases {
		applyCases[i].Dirs = []string{Dir}
	}
	for i := range helperCases {
		helperCases[i].Dirs = []string{Dir}
	}
}

// Bad metadata is refused before anything is done: one error line naming
// the key, exit 1, no file written and no command run, not even the
// `sysctl -a` that only a name the kernel may have needs.
func TestApplyRefusesBadMetadataBeforeActing(t *testing.T) {
	for _, tc := range []struct{ name, sysctl, key string }{
		{"a number", `5`, "sysctl:"},
		{"a boolean", `true`, "sysctl:"},
		{"a list", `["vm.swappiness"]`, "sysctl:"},
		{"a string", `"vm.swappiness=1"`, "sysctl:"},
		{"null value", `{"kernel.pid_max": 65536, "vm.swappiness": null}`, "sysctl.vm.swappiness:"},
		{"boolean value", `{"vm.swappiness": true}`, "sysctl.vm.swappiness:"},
		{"list value", `{"vm.swappiness": [10]}`, "sysctl.vm.swappiness:"},
		{"object value", `{"vm.swappiness": {}}`, "sysctl.vm.swappiness:"},
		{"empty value", `{"vm.swappiness": ""}`, "sysctl.vm.swappiness:"},
		{"line break", `{"vm.swappiness": "10\nkernel.pid_max = 1"}`, "sysctl.vm.swappiness:"},
		{"carriage return", `{"vm.swappiness": "10\r"}`, "sysctl.vm.swappiness:"},
		{"NUL", `{"vm.swappiness": "10\u0000"}`, "sysctl.vm.swappiness:"},
		{"NaN", `{"vm.swappiness": NaN}`, "sysctl.vm.swappiness:"},
		{"Infinity", `{"vm.swappiness": -Infinity}`, "sysctl.vm.swappiness:"},
		{"past a double", `{"vm.swappiness": 1e400}`, "sysctl.vm.swappiness:"},
		{"leading dot", `{".et.ipv4.ip_forward": 1}`, "sysctl..et.ipv4.ip_forward:"},
		{"slash", `{"net/ipv4/ip_forward": 1}`, "sysctl.net/ipv4/ip_forward:"},
		{"equals", `{"vm.swappiness=1": 1}`, "sysctl.vm.swappiness=1:"},
		{"space", `{"vm swappiness": 1}`, `sysctl."vm swappiness":`},
		{"newline in the name", `{"vm\nswappiness": 1}`, `sysctl."vm\nswappiness":`},
		{"empty name", `{"": 1}`, `sysctl."":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nodeconfigtest.Case{Name: tc.name, Metadata: `{"sysctl": ` + tc.sysctl + `}`, Dirs: []string{Dir},
				Files: map[string]string{forward: "# x\nnet.ipv4.ip_forward = 1\n"}}
			r := nodeconfigtest.Run(t, c, RunApply)
			if want := nodeconfigtest.Refused(t, c); r.Text != want || r.Status != 1 {
				t.Errorf("status %d, left\n%swant\n%s", r.Status, r.Text, want)
			}
			if len(r.Calls) != 0 {
				t.Errorf("ran %q, want no command", r.Calls)
			}
			if !strings.Contains(r.Stderr, ": ERROR: "+tc.key+" ") || strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line naming %s", r.Stderr, tc.key)
			}
		})
	}
}

// Ours reads the kernel's list (`sysctl -a`) once a run; the reference's
// sysctl-set-value read it once for each new parameter.
func TestApplyReadsTheKernelsListOnce(t *testing.T) {
	c := applyCase(t, "apply-numbers")
	if n := count(nodeconfigtest.Run(t, c, RunApply).Calls, "sysctl -a"); n != 1 {
		t.Errorf("ours ran sysctl -a %d times, want 1", n)
	}
	if testing.Short() {
		return
	}
	apply := nodeconfigtest.Reference(t, "elements/sysctl/os-refresh-config/configure.d/10-sysctl-apply-config")
	bin := nodeconfigtest.Reference(t, "elements/sysctl/bin")
	if n := count(nodeconfigtest.ReferenceResult(t, c, apply, bin).Calls, "sysctl -a"); n != 3 {
		t.Errorf("the reference ran sysctl -a %d times, want 3 (a new parameter each)", n)
	}
}

// A value the kernel refuses (`sysctl -p` fails) is exit status 1, as
// every failure of the step; the reference exited with sysctl's own
// status (255 from the fake, as from procps' sysctl).
func TestApplyKernelRefusalIsStatusOne(t *testing.T) {
	c := applyCase(t, "apply-refused-value")
	if r := nodeconfigtest.Run(t, c, RunApply); r.Status != 1 {
		t.Errorf("ours: status %d, want 1", r.Status)
	}
	if testing.Short() {
		return
	}
	apply := nodeconfigtest.Reference(t, "elements/sysctl/os-refresh-config/configure.d/10-sysctl-apply-config")
	bin := nodeconfigtest.Reference(t, "elements/sysctl/bin")
	if r := nodeconfigtest.ReferenceResult(t, c, apply, bin); r.Status != 255 {
		t.Errorf("the reference: status %d, want 255 (sysctl -p's)", r.Status)
	}
}

func applyCase(t *testing.T, name string) nodeconfigtest.Case {
	t.Helper()
	withDir()
	for _, c := range applyCases {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no row %s", name)
	return nodeconfigtest.Case{}
}

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

// The helpers too refuse a name or a value their file could not hold
// before they run anything: one error line, no file, no command.
func TestHelpersRefuseBeforeActing(t *testing.T) {
	for _, tc := range []struct {
		prog string
		step nodeconfigtest.Step
		args []string
		line string
	}{
		{"sysctl-set-value", RunSet, []string{"vm.swappiness", "10\nkernel.pid_max = 1"}, `vm.swappiness: "10\nkernel.pid_max = 1" has a line break`},
		{"sysctl-set-value", RunSet, []string{".et.ipv4.ip_forward", "1"}, `.et.ipv4.ip_forward: ".et.ipv4.ip_forward" starts with a dot`},
		{"sysctl-set-value", RunSet, []string{"vm\nswappiness", "1"}, `"vm\nswappiness": "vm\nswappiness" has white space or a control character`},
		{"sysctl-write-value", RunWrite, []string{"vm.swappiness", "10\r"}, `vm.swappiness: "10\r" has a line break`},
		{"sysctl-append-value", RunAppend, []string{"net.ipv4.ip_local_reserved_ports", "1 2"}, `net.ipv4.ip_local_reserved_ports: "1 2" has white space or a control character`},
	} {
		t.Run(tc.prog+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			c := nodeconfigtest.Case{Args: tc.args, Dirs: []string{Dir}}
			r := nodeconfigtest.Run(t, c, tc.step)
			if want := nodeconfigtest.Refused(t, c); r.Text != want || len(r.Calls) != 0 {
				t.Errorf("ran %q, left\n%swant nothing run, nothing changed", r.Calls, r.Text)
			}
			if want := tc.prog + ": ERROR: " + tc.line + "\n"; r.Stderr != want {
				t.Errorf("stderr %q, want %q", r.Stderr, want)
			}
		})
	}
}
