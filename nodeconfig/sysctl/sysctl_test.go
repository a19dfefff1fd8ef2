package sysctl

import (
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
