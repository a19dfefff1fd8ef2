package heatconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// echoHook saves its stdin and answers a result naming its group; every
// run appends the group to the node's order file.
const echoHook = `cat > "$NODE/$(basename "$0").stdin"
echo "$(basename "$0")" >> "$NODE/order"
printf '{"deploy_stdout": "hi from %s", "deploy_stderr": "", "deploy_status_code": 0}' "$(basename "$0")"
`

// The reference's main test: each deployment runs once, in list order,
// its hook gets exactly the (coerced) deployment, the state file holds
// it, the notify file holds the hook's result, which notify gets with the
// state file's path; a second run runs nothing; a new id runs alone.
func TestRunsEachDeploymentOnceInListOrder(t *testing.T) {
	n := newNode(t)
	for _, g := range []string{"g1", "g2", "g3"} {
		n.hook(g, echoHook)
	}
	n.deployments(dep("c", "g3"), dep("a", "g1"), dep("b", "g2"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if order, _ := os.ReadFile(filepath.Join(n.dir, "order")); string(order) != "g3\ng1\ng2\n" {
		t.Errorf("hooks ran in the order %q, want the list's", order)
	}
	got := n.notified()
	for id, group := range map[string]string{"a": "g1", "b": "g2", "c": "g3"} {
		d := mustParse(t, dep(id, group))
		stdin, _ := os.ReadFile(filepath.Join(n.dir, group+".stdin"))
		if string(stdin) != jsondoc.Dumps(d) {
			t.Errorf("hook %s got %s, want %s", group, stdin, jsondoc.Dumps(d))
		}
		if s, _ := n.state(id + ".json"); s != jsondoc.DumpsIndent(d, 2) {
			t.Errorf("state file of %s is %s", id, s)
		}
		fi, err := os.Stat(filepath.Join(n.deployed, id+".json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("state file of %s: %v %v, want mode 0600", id, fi.Mode(), err)
		}
		want := `{"deploy_stdout": "hi from ` + group + `", "deploy_stderr": "", "deploy_status_code": 0}`
		if got[id] != want {
			t.Errorf("notify for %s got %q, want %q", id, got[id], want)
		}
		if s, _ := n.state(id + ".notify.json"); s != jsondoc.DumpsIndent(mustParse(t, want), 2) {
			t.Errorf("notify file of %s is %s", id, s)
		}
	}
	if fi, err := os.Stat(n.deployed); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v %v, want 0700", fi.Mode(), err)
	}

	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if len(n.notified()) != 3 {
		t.Errorf("a second run signalled again: %v", n.notified())
	}
	for _, id := range []string{"a", "b", "c"} {
		if !strings.Contains(n.stderr.String(), "[WARNING] Skipping config "+id+", already deployed\n") ||
			!strings.Contains(n.stderr.String(), "[WARNING] To force-deploy, rm "+filepath.Join(n.deployed, id+".json")+"\n") {
			t.Errorf("no skip lines for %s:\n%s", id, n.stderr.String())
		}
	}

	n.deployments(dep("c", "g3"), dep("a2", "g1"), dep("b", "g2"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if order, _ := os.ReadFile(filepath.Join(n.dir, "order")); string(order) != "g3\ng1\ng2\ng1\n" {
		t.Errorf("after a new id, runs were %q; want only g1 again", order)
	}
}

// The signal data follows the reference's rules (re-checked by running
// it): a JSON object on stdout is the signal whatever the exit status;
// other output becomes stdout/stderr/status; nothing and 0 is {}.
func TestSignalData(t *testing.T) {
	for _, tc := range []struct{ name, hook, want string }{
		{"json", `printf '{"deploy_status_code": 0, "x": 1}'`, `{"deploy_status_code": 0, "x": 1}`},
		{"json despite exit 5", `printf '{"deploy_status_code": 0, "x": 1}'; exit 5`, `{"deploy_status_code": 0, "x": 1}`},
		{"not json, exit 3", `echo "not json"; exit 3`, `{"deploy_stdout": "not json\n", "deploy_stderr": "", "deploy_status_code": 3}`},
		{"not json, exit 0", `echo "plain"; echo warn >&2`, `{"deploy_stdout": "plain\n", "deploy_stderr": "warn\n", "deploy_status_code": 0}`},
		{"nothing, exit 0", `true`, `{}`},
		{"nothing, exit 2", `echo boom >&2; exit 2`, `{"deploy_stdout": "", "deploy_stderr": "boom\n", "deploy_status_code": 2}`},
		{"a JSON list is not a result", `echo '[1]'`, `{"deploy_stdout": "[1]\n", "deploy_stderr": "", "deploy_status_code": 0}`},
		{"killed by SIGKILL", `kill -9 $$`, `{"deploy_stdout": "", "deploy_stderr": "", "deploy_status_code": -9}`},
		{"invalid UTF-8 replaced", `printf 'a\377b'; exit 1`, `{"deploy_stdout": "a\ufffdb", "deploy_stderr": "", "deploy_status_code": 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			n.hook("h", tc.hook)
			n.deployments(dep("x", "h"))
			if err := n.run(); err != nil {
				t.Fatal(err)
			}
			if got := n.notified()["x"]; got != tc.want {
				t.Errorf("signal %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMissingConfigFile(t *testing.T) {
	n := newNode(t)
	err := n.run()
	if exitcode.Of(err) != exitcode.Failure || !strings.Contains(n.stderr.String(), "(heat-config) [ERROR] No config file "+n.conf+"\n") {
		t.Fatalf("exit %d, log %q", exitcode.Of(err), n.stderr.String())
	}
}

// The deployments file holds every deployment's credentials.
func TestConfigFileMadePrivate(t *testing.T) {
	n := newNode(t)
	n.deployments()
	os.Chmod(n.conf, 0o644)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(n.conf); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
}

// State kept under /var/run before 2016 moves to the new place, and what
// it says was deployed does not run again.
func TestLegacyStateMigrated(t *testing.T) {
	n := newNode(t)
	old := filepath.Join(n.dir, "old-deployed")
	os.Mkdir(old, 0o700)
	os.WriteFile(filepath.Join(old, "a.json"), nil, 0o600)
	n.hook("h", echoHook)
	n.deployments(dep("a", "h"), dep("b", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the legacy directory is still there: %v", err)
	}
	if _, ok := n.notified()["a"]; ok || len(n.notified()) != 1 {
		t.Errorf("signalled %v; want only b", n.notified())
	}
	if !strings.Contains(n.stderr.String(), "[DEBUG] Migrating deployed state from "+old+" to "+n.deployed+"\n") {
		t.Errorf("no migration line:\n%s", n.stderr.String())
	}
}

// A failing notify is logged; the run goes on and exits 0, as the
// reference's.
func TestNotifyFailureIsLogged(t *testing.T) {
	n := newNode(t)
	n.extraEnv = []string{"NOTIFY_EXIT=1"}
	n.hook("h", echoHook)
	n.deployments(dep("a", "h"), dep("b", "h"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(n.stderr.String(), "[ERROR] Error running heat-config-notify. [1]\n"); c != 2 {
		t.Errorf("%d notify errors logged, want 2:\n%s", c, n.stderr.String())
	}
}

// Each signalled deployment leaves a record for `tripleo-agent status`:
// when, with which status code, by which transport, and whether
// heat-config-notify succeeded.
func TestSignalRecord(t *testing.T) {
	n := newNode(t)
	n.hook("h", `printf '{"deploy_status_code": 2}'`)
	n.deployments(dep("a", "h"), `{"id": "b", "group": "h", "inputs": [{"name": "deploy_signal_transport", "type": "String", "value": "TEMP_URL_SIGNAL"}]}`)
	n.extraEnv = []string{"NOTIFY_EXIT=1"}
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]agentstate.Signal{
		"a": {Version: 1, StatusCode: "2", Transport: "NO_SIGNAL", Result: "failed", NotifyExit: 1},
		"b": {Version: 1, StatusCode: "2", Transport: "TEMP_URL_SIGNAL", Result: "failed", NotifyExit: 1},
	} {
		var got agentstate.Signal
		if err := agentstate.Read(filepath.Join(n.deployed, id+".signal.json"), &got); err != nil {
			t.Fatal(err)
		}
		if got.At.IsZero() {
			t.Errorf("%s: no time", id)
		}
		got.At = want.At
		if got != want {
			t.Errorf("%s: %+v, want %+v", id, got, want)
		}
	}
}

// An empty deployments file is what heat-config's template renders when
// the metadata has no deployments key, as on a node configured by hand:
// nothing runs, nothing is logged, and the pass succeeds. A file that is
// not JSON is still named in an ERROR line.
func TestEmptyConfigFile(t *testing.T) {
	for _, tc := range []struct {
		name, content, log string
	}{
		{"empty", "", ""},
		{"blank lines", "\n \n", ""},
		{"not JSON", "{oops", "[ERROR]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNode(t)
			n.deployments()
			if err := os.WriteFile(n.conf, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := n.run(); err != nil {
				t.Fatalf("exit %d: %v", exitcode.Of(err), err)
			}
			if got := n.stderr.String(); (tc.log == "") != (got == "") || !strings.Contains(got, tc.log) {
				t.Errorf("log %q, want one with %q", got, tc.log)
			}
		})
	}
}
