package gateway

import (
	"testing"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

const sysconfig = "/etc/sysconfig"

// The metadata inputs; the reference's results are
// testdata/golden/<name>.txt (testdata/README.md).
var cases = []nodeconfigtest.Case{
	{Name: "no-key", Metadata: `{"network-config": {}}`, Dirs: []string{sysconfig}},
	{Name: "empty", Metadata: `{"network-config": {"gateway-dev": ""}}`, Dirs: []string{sysconfig}},
	{Name: "new-file", Metadata: `{"network-config": {"gateway-dev": "eth1"}}`, Dirs: []string{sysconfig}},
	{Name: "append", Metadata: `{"network-config": {"gateway-dev": "eth1"}}`,
		Files: map[string]string{File: "0600:NETWORKING=yes\nHOSTNAME=node0\n"}},
	{Name: "replace", Metadata: `{"network-config": {"gateway-dev": "br-ex"}}`,
		Files: map[string]string{File: "NETWORKING=yes\n  GATEWAYDEV=eth0 # dhcp\n#GATEWAYDEV=eth9\nNOZEROCONF=yes\n"}},
	{Name: "commented-only", Metadata: `{"network-config": {"gateway-dev": "eth1"}}`,
		Files: map[string]string{File: "#GATEWAYDEV=eth0\n"}},
	{Name: "vlan-alias", Metadata: `{"network-config": {"gateway-dev": "eth0.10:1"}}`,
		Files: map[string]string{File: "GATEWAYDEV=eth0\n"}},
	{Name: "no-sysconfig-dir", Metadata: `{"network-config": {"gateway-dev": "eth1"}}`},
	{Name: "slash", Metadata: `{"network-config": {"gateway-dev": "eth/1"}}`,
		Files: map[string]string{File: "GATEWAYDEV=eth0\n"}},
	{Name: "no-final-newline", Metadata: `{"network-config": {"gateway-dev": "eth1"}}`,
		Files:   map[string]string{File: "NETWORKING=yes"},
		Differs: "the reference appends to the last line: NETWORKING=yesGATEWAYDEV=eth1"},
	{Name: "shell-words", Metadata: `{"network-config": {"gateway-dev": "eth1 eth2"}}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "the reference writes GATEWAYDEV=eth1 eth2 and restarts eth1 and eth2; ours refuses a value that is not an interface name"},
	{Name: "a-number", Metadata: `{"network-config": {"gateway-dev": 5}}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "the reference takes 5 for an interface name; ours refuses what is not a string"},
	{Name: "network-config-a-list", Metadata: `{"network-config": ["eth1"]}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "the reference finds no key in a network-config that is not an object and does nothing, successfully; ours refuses it"},
	{Name: "network-config-a-string", Metadata: `{"network-config": "eth1"}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "as network-config-a-list"},
	{Name: "network-config-null", Metadata: `{"network-config": null}`, Files: map[string]string{File: "GATEWAYDEV=eth0\n"}},
	{Name: "nul", Metadata: `{"network-config": {"gateway-dev": "eth1\u0000"}}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "bash drops the NUL (a warning) and the reference sets eth1; ours refuses the value"},
	{Name: "line-break", Metadata: `{"network-config": {"gateway-dev": "eth1\neth2"}}`,
		Files:   map[string]string{File: "NETWORKING=yes\n"},
		Differs: "the reference appends GATEWAYDEV=eth1 and a line eth2, and restarts eth1 and eth2; ours refuses the value"},
	{Name: "carriage-return", Metadata: `{"network-config": {"gateway-dev": "eth1\r"}}`,
		Files:   map[string]string{File: "GATEWAYDEV=eth0\n"},
		Differs: "the reference writes GATEWAYDEV=eth1\\r and restarts \"eth1\\r\"; ours refuses the value"},
}

// The one error line of each refusal names the key, or the file and
// what the node lacks.
func TestErrorLines(t *testing.T) {
	for _, c := range []struct{ name, metadata, want string }{
		{"network-config-a-list", `{"network-config": ["eth1"]}`, "network-config is a list, not an object"},
		{"network-config-a-string", `{"network-config": "eth1"}`, "network-config is a string, not an object"},
		{"a-number", `{"network-config": {"gateway-dev": 5}}`, "network-config.gateway-dev is a number, not a string"},
		{"a-list", `{"network-config": {"gateway-dev": ["eth1"]}}`, "network-config.gateway-dev is a list, not a string"},
		{"nul", `{"network-config": {"gateway-dev": "eth1\u0000"}}`, "network-config.gateway-dev holds a NUL or a line break"},
		{"line-break", `{"network-config": {"gateway-dev": "eth1\neth2"}}`, "network-config.gateway-dev holds a NUL or a line break"},
		{"carriage-return", `{"network-config": {"gateway-dev": "eth1\r"}}`, "network-config.gateway-dev holds a NUL or a line break"},
		{"shell-words", `{"network-config": {"gateway-dev": "eth1 eth2"}}`, `network-config.gateway-dev: "eth1 eth2" is not an interface name`},
		{"no-sysconfig-dir", `{"network-config": {"gateway-dev": "eth1"}}`,
			"/etc/sysconfig/network: this node has no /etc/sysconfig: the network-gateway element is for the RHEL family's network scripts (ifcfg), not this image's; nothing changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := nodeconfigtest.Run(t, nodeconfigtest.Case{Name: c.name, Metadata: c.metadata}, Run)
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
	script := nodeconfigtest.Reference(t, "elements/network-gateway/os-refresh-config/configure.d/25-set-network-gateway")
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			nodeconfigtest.Golden(t, c.Name, "", nodeconfigtest.RunReference(t, c, script, ""), false)
		})
	}
}
