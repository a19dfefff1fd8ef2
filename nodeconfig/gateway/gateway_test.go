package gateway

import (
	"testing"

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
