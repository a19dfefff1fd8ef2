package netconfig

import (
	"testing"

	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// The element's os-apply-config template renders the same bytes, with
// the same mode, under our os-apply-config as under Debian's Python
// os-apply-config 12.0.0 (skipped when it is not installed, unless
// REQUIRE_REAL_TOOLS=1).
func TestTemplateRendersAsTheReference(t *testing.T) {
	nodeconfigtest.SameRenders(t, "../../elements/os-net-config/os-apply-config", map[string]string{
		"object":       `{"os_net_config": {"network_config": [{"type": "ovs_bridge", "name": "br-ctlplane", "use_dhcp": true, "members": [{"type": "interface", "name": "em1", "primary": true}]}]}}`,
		"string":       `{"os_net_config": "network_config:\n  - type: interface\n    name: eth0"}`,
		"odd values":   `{"os_net_config": {"network_config": [], "x": 1.0, "y": 1e100, "z": "caf\u00e9 <&>", "n": null}}`,
		"list":         `{"os_net_config": [1, 2]}`,
		"empty object": `{"os_net_config": {}}`,
		"no key":       `{"other": 1}`,
	})
}
