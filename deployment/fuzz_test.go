package deployment

import (
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// listSeeds are deployments lists: Heat's shape, coercions, components,
// and the items heat-config must skip.
var listSeeds = []string{
	`[{"id": "a1", "name": "n", "group": "script", "creation_time": "t", "config": "echo", "inputs": [{"name": "deploy_action", "type": "String", "value": "CREATE"}, {"name": "n", "type": "String", "value": 5}, {"name": "deploy_signal_id", "value": "http://x/?sig=1"}], "outputs": [{"name": "o", "error_output": true}], "options": {"o": null}}]`,
	`[{"id": "c", "group": "component", "inputs": [{"name": "deploy_action", "value": "CREATE"}], "config": {"configs": [{"actions": ["CREATE"], "config": "x", "tool": "script"}]}}]`,
	`[{"id": "b", "group": "g", "inputs": [{"name": "x", "type": "String", "value": {"k": [1, 2.5, null, true]}}], "z": 1, "a": 2}]`,
	`[{"id": "../x", "group": "g", "inputs": []}, {"id": "", "group": "g", "inputs": []}, {"id": 1}, {"group": "g"}, 3, null]`,
	`[{"id": "a", "group": "g", "inputs": [{"name": 1}]}, {"id": "a", "group": "g", "inputs": "x"}, {"id": "a", "group": 7, "inputs": []}]`,
	`[{"id": "dup", "id": "dup2", "group": "g", "inputs": [], "inputs": [{"name": "i"}]}]`,
	`{"not": "a list"}`, `[`, ``,
}

// FuzzDeploymentsList reads 55-heat-config's deployments list. A list
// that cannot be read, and an item that is not a deployment, are
// one-line errors; a deployment's id names a file of the state directory
// and nothing else; and the document a hook gets (JSON) and the state
// file (Indented), read again, are the deployment unchanged, key order
// and all, after the reference's string coercion.
func FuzzDeploymentsList(f *testing.F) {
	for _, s := range listSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := List(data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		for i, v := range list {
			_ = Label(v)
			d, err := FromValue(v)
			if err != nil {
				if strings.ContainsAny(err.Error(), "\n\r") && !strings.ContainsAny(jsondoc.Dumps(v), "\n\r") {
					t.Fatalf("item %d: error is not one line: %q", i, err)
				}
				continue
			}
			id := d.ID()
			if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") {
				t.Fatalf("item %d: id %q names no file of its own", i, id)
			}
			d.CoerceStrings()
			for _, in := range d.Inputs() {
				if _, isStr := in.Value.(string); in.Type == "String" && in.HasValue && !isStr {
					t.Fatalf("input %q of type String not coerced: %v", in.Name, in.Value)
				}
			}
			coerced := d.JSON()
			for what, text := range map[string]string{"JSON": coerced, "Indented": d.Indented()} {
				back, err := Parse([]byte(text))
				if err != nil {
					t.Fatalf("%s does not read back: %v\n%s", what, err, text)
				}
				if back.JSON() != coerced {
					t.Fatalf("%s reads back otherwise:\n%s\n%s", what, coerced, back.JSON())
				}
			}
			_, _, _, _ = d.Outputs(), d.Redactor(), d.OptionString("x"), d.ConfigString()
			if d.Group() == "component" {
				d.ResolveComponent()
			}
		}
	})
}
