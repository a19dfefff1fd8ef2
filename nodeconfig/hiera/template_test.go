package hiera

import (
	"testing"

	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
)

// The element's os-apply-config template renders the same bytes, with
// the same mode, under our os-apply-config as under Debian's Python
// os-apply-config 12.0.0 (skipped when it is not installed, unless
// REQUIRE_REAL_TOOLS=1).
func TestTemplateRendersAsTheReference(t *testing.T) {
	nodeconfigtest.SameRenders(t, "../../elements/hiera/os-apply-config", map[string]string{
		"hierarchy":    `{"hiera": {"hierarchy": ["heat_config_%{::deploy_config_name}", "controller", "common", "a&b <c> \"d\" 'e'"]}}`,
		"empty list":   `{"hiera": {"hierarchy": []}}`,
		"no hierarchy": `{"hiera": {"datafiles": {"common": {"raw_data": "a: 1"}}}}`,
		"numbers":      `{"hiera": {"hierarchy": [1, 2.5, true, null, "caf\u00e9"]}}`,
		"no hiera":     `{"other": 1}`,
	})
}
