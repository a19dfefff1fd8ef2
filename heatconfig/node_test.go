package heatconfig

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// node is a scratch node: the deployments file, the state directory, a
// hooks directory and a heat-config-notify stand-in that records each
// call (its argument and its stdin) under notified/.
type node struct {
	t                                 *testing.T
	dir, conf, deployed, hooks, calls string
	extraEnv                          []string
	stderr                            bytes.Buffer
	journal                           func(string, journal.Priority, map[string]string) error
}

const fakeNotify = `#!/bin/sh
i=0; while [ -e "$CALLS/$i.stdin" ]; do i=$((i+1)); done
cat > "$CALLS/$i.stdin"; printf '%s' "$1" > "$CALLS/$i.arg"
printf '%s' "${HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT-unset}" > "$CALLS/$i.retry"
exit ${NOTIFY_EXIT:-0}
`

func newNode(t *testing.T) *node {
	t.Helper()
	dir := t.TempDir()
	n := &node{t: t, dir: dir, conf: filepath.Join(dir, "heat-config"), deployed: filepath.Join(dir, "deployed"),
		hooks: filepath.Join(dir, "hooks"), calls: filepath.Join(dir, "notified")}
	for _, d := range []string{n.hooks, n.calls} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n.script(filepath.Join(dir, "notify"), fakeNotify)
	return n
}

func (n *node) script(path, body string) {
	n.t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		n.t.Fatal(err)
	}
}

// hook installs a shell hook for group.
func (n *node) hook(group, body string) { n.script(filepath.Join(n.hooks, group), "#!/bin/sh\n"+body) }

// deployments writes the deployments file.
func (n *node) deployments(items ...string) {
	n.t.Helper()
	if err := os.WriteFile(n.conf, []byte("["+strings.Join(items, ", ")+"]"), 0o600); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) env() Env {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HEAT_SHELL_CONFIG=" + n.conf, "HEAT_CONFIG_DEPLOYED=" + n.deployed,
		"HEAT_CONFIG_DEPLOYED_OLD=" + filepath.Join(n.dir, "old-deployed"), "HEAT_CONFIG_HOOKS=" + n.hooks,
		"HEAT_CONFIG_NOTIFY=" + filepath.Join(n.dir, "notify"), "CALLS=" + n.calls, "NODE=" + n.dir,
	}
	return Env{Stderr: &n.stderr, Environ: append(env, n.extraEnv...), Root: n.dir + "/root",
		Grace: 200 * time.Millisecond, Journal: n.journal}
}

func (n *node) run() error {
	n.t.Helper()
	n.stderr.Reset()
	return Run(context.Background(), nil, n.env())
}

// notified returns the signal data each notify call got, keyed by the
// deployment id its argument names.
func (n *node) notified() map[string]string {
	n.t.Helper()
	out := map[string]string{}
	for i := 0; ; i++ {
		arg, err := os.ReadFile(filepath.Join(n.calls, fmt.Sprintf("%d.arg", i)))
		if err != nil {
			return out
		}
		stdin, _ := os.ReadFile(filepath.Join(n.calls, fmt.Sprintf("%d.stdin", i)))
		id := strings.TrimSuffix(filepath.Base(string(arg)), ".json")
		if filepath.Dir(string(arg)) != n.deployed {
			n.t.Errorf("notify was given %s, not a file of the state directory", arg)
		}
		out[id] = string(stdin)
	}
}

func (n *node) state(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(n.deployed, name))
	return string(b), err == nil
}

// dep is a deployment's JSON, as Heat sends it.
func dep(id, group string, extra ...string) string {
	s := fmt.Sprintf(`{"id": %q, "name": "name-%s", "group": %q, "creation_time": "2026-11-25T10:00:00Z", "config": "c-%s", `+
		`"inputs": [{"name": "deploy_action", "type": "String", "value": "CREATE"}], "outputs": [], "options": null`, id, id, group, id)
	for _, e := range extra {
		s += ", " + e
	}
	return s + "}"
}

func mustParse(t *testing.T, s string) jsondoc.Value {
	t.Helper()
	v, err := jsondoc.Loads([]byte(s))
	if err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}
