package heatconfig

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/deployment"
)

// FuzzRun runs 55-heat-config on a fuzzed deployments file, twice, with a
// hook for the group "script" and none for the others. Whatever the
// file: every deployment whose id is new in the list runs at most once
// and is signalled once (a group without a hook is signalled as a
// failure), its state file is the deployment as the hook got it, in key
// order; each item that is not a deployment is one error line; nothing
// but state, notify and signal files appears in the state directory; and
// the second run runs and signals nothing.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"[" + dep("a", "script") + ", " + dep("b", "nohook") + ", " + dep("a", "script") + "]",
		"[" + dep("c", "os-apply-config") + ", " + dep("d", "Heat::Ungrouped") + ", {\"id\": \"../e\"}, 1, null]",
		`[{"id": "f", "group": "component", "inputs": [{"name": "deploy_action", "value": "CREATE"}], "config": {"configs": [{"actions": ["CREATE"], "config": "x", "tool": "script"}]}}]`,
		`[{"id": "g", "group": "script", "inputs": [{"name": "n", "type": "String", "value": {"z": 1, "a": [true]}}], "z": 0, "a": 1}]`,
		`{"not": "a list"}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := newNode(t)
		n.hook("script", `cat > /dev/null; echo '{"deploy_stdout": "ok", "deploy_status_code": 0}'`)
		if err := os.WriteFile(n.conf, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := n.run(); err != nil {
			t.Fatalf("run: %v\n%s", err, n.stderr.String())
		}
		first := n.stderr.String()
		want := map[string]string{} // id -> the state file's text
		list, err := deployment.List(data)
		if err == nil {
			for i, v := range list {
				d, err := deployment.FromValue(v)
				if err != nil {
					if !strings.Contains(first, "Skipping deployment "+strconv.Itoa(i)+" ") {
						t.Errorf("item %d refused without a line saying so:\n%s", i, first)
					}
					continue
				}
				if _, seen := want[d.ID()]; seen {
					continue
				}
				d.CoerceStrings()
				if d.Group() == "component" {
					if _, ok := d.ResolveComponent(); !ok || d.Group() == "" {
						want[d.ID()] = ""
						continue
					}
				}
				if d.Group() == "os-apply-config" {
					want[d.ID()] = "" // no hook on purpose: nothing written
					continue
				}
				want[d.ID()] = d.Indented()
			}
		}
		notified := n.notified()
		for id, state := range want {
			got, ok := n.state(id + ".json")
			switch {
			case state == "" && ok:
				t.Errorf("%s ran: %s", id, got)
			case state != "" && got != state:
				t.Errorf("state file of %s is\n%s\nwant\n%s", id, got, state)
			case state != "" && notified[id] == "":
				t.Errorf("%s not signalled", id)
			}
		}
		calls, _ := filepath.Glob(filepath.Join(n.calls, "*.arg"))
		if len(calls) != len(notified) {
			t.Errorf("%d notify calls for %d deployments: one was signalled twice", len(calls), len(notified))
		}
		entries, _ := os.ReadDir(n.deployed)
		for _, e := range entries {
			id := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".json"), ".notify"), ".signal")
			if _, ok := want[id]; !ok || !strings.HasSuffix(e.Name(), ".json") {
				t.Errorf("unexpected %s in the state directory", e.Name())
			}
		}
		if err := n.run(); err != nil {
			t.Fatal(err)
		}
		if calls2, _ := filepath.Glob(filepath.Join(n.calls, "*.arg")); len(calls2) != len(calls) {
			t.Errorf("the second run signalled again:\n%s", n.stderr.String())
		}
	})
}
