// Package signaltest is what the tests of the signal seam, its list and
// its transports share: a deployment made of the inputs a test names.
package signaltest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/deployment"
)

// Deployment is a script deployment with the given inputs, as name,
// value pairs of JSON text.
func Deployment(t testing.TB, inputs ...string) *deployment.Deployment {
	t.Helper()
	var items []string
	for i := 0; i < len(inputs); i += 2 {
		items = append(items, fmt.Sprintf(`{"name": %q, "value": %s}`, inputs[i], inputs[i+1]))
	}
	d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "config": "five", "inputs": [` + strings.Join(items, ", ") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// StackUser are the Keystone inputs of the stack user, as Heat sends
// them with HEAT_SIGNAL and ZAQAR_SIGNAL.
var StackUser = []string{"deploy_auth_url", `"http://ks/v3"`, "deploy_user_id", `"aaaa"`, "deploy_password", `"pa55word"`,
	"deploy_project_id", `"bbbb"`}

// HeatInputs are the inputs of a HEAT_SIGNAL deployment.
var HeatInputs = append(append([]string{}, StackUser...), "deploy_stack_id", `"st/cccc"`, "deploy_resource_name", `"the_resource"`)
