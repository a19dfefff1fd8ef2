package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeCommands are the command lines of the README's Troubleshooting
// section (its ```sh blocks), in order.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Troubleshooting\n")
	if !ok {
		t.Fatal("README.md has no Troubleshooting section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var cmds []string
	in := false
	for _, line := range strings.Split(section, "\n") {
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && strings.TrimSpace(line) != "":
			cmds = append(cmds, line)
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("README's Troubleshooting has %d commands: %q", len(cmds), cmds)
	}
	return cmds
}

// troubleshooting runs every command of the README's Troubleshooting
// section on the machine, as written, with <name> and <id> standing for
// the script deployment, and checks what the ones that change things did.
func troubleshooting(t *testing.T, m *machine, st *Stack) {
	const deployment = "e2e-deployment"
	id := ids(st)[deployment]
	before := m.state()
	for _, c := range readmeCommands(t) {
		line := strings.NewReplacer("<name>", deployment, "<id>", id).Replace(c)
		out, err := m.sh(line)
		if err != nil {
			t.Errorf("README command %q: %v", c, err)
			continue
		}
		switch {
		case strings.Contains(line, "grep -l"):
			if !strings.Contains(out, id+".json") {
				t.Errorf("%q printed %q, want the state file of %s", c, out, id)
			}
		case strings.Contains(line, "DEPLOYMENT_NAME="):
			if !strings.Contains(out, "from the agent") && !strings.Contains(out, "e2e") {
				t.Errorf("%q shows nothing of the deployment:\n%s", c, out)
			}
		case line == "tripleo-agent-status":
			if !regexp.MustCompile(`(?i)healthy`).MatchString(out) {
				t.Errorf("tripleo-agent-status:\n%s", out)
			}
		}
	}
	after := m.state()
	// The forced pass with everything deployed ran nothing; removing the
	// state file ran the script once more; rebuild-deployed changed nothing.
	if len(after.ScriptRuns) != len(before.ScriptRuns)+1 || after.PuppetRuns != before.PuppetRuns {
		t.Errorf("runs after the README's commands: script %d (was %d), puppet %d (was %d); want one more script run",
			len(after.ScriptRuns), len(before.ScriptRuns), after.PuppetRuns, before.PuppetRuns)
	}
	if !sameSet(after.Deployed, before.Deployed) {
		t.Errorf("deployed %v after the README's commands, was %v", after.Deployed, before.Deployed)
	}
}

// upgrade: a node that converged with Debian's Python os-collect-config,
// os-refresh-config and os-apply-config is switched to the .deb with one
// apt-get install; the daemon is ours afterwards and re-runs nothing.
func upgrade(t *testing.T, b built) {
	const name = "image-upgrade"
	st := imageStack(t, "create", name, "--replace", "--transport", PollTempURL, "--signal", TempURLSignal, "--greeting", "hello")
	m := bootMachine(t, name, b.python, map[string]string{occConf: bootConf(t, st)})
	o, err := waitStack(context.Background(), name, stackTimeout)
	if err != nil || o.Status != "CREATE_COMPLETE" {
		t.Fatalf("the Python agent did not complete %s: %v %v", name, o, err)
	}
	if cmd := m.must("sh", "-c", "cat /proc/$(systemctl show -p MainPID --value os-collect-config)/cmdline | tr '\\0' ' '"); !strings.Contains(cmd, "python3") {
		t.Fatalf("the node's os-collect-config is not the Python one: %q", cmd)
	}
	// The Python agent commits its cache after the command succeeded.
	last := Node{Dir: m.dir}.Path("/var/lib/os-collect-config/request.json.last")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(last); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Python agent never committed its cache (%s)", last)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // its other keys are committed in the same step
	want := m.state()
	if len(want.ScriptRuns) != 1 || len(want.Deployed) != 1 {
		t.Fatalf("the Python agent's node: %+v, want the script deployed and run once", want)
	}

	if err := os.WriteFile(m.path("/root/tripleo-agent.deb"), mustRead(t, b.deb), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	out, err := m.exec(10*time.Minute, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "/root/tripleo-agent.deb")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("IMAGE upgrade: apt-get install of the .deb over the Python agent took %.1fs", time.Since(t0).Seconds())
	for _, p := range []string{"python3-os-collect-config", "python3-os-refresh-config", "python3-os-apply-config"} {
		if !strings.Contains(out, "Removing "+p) {
			t.Errorf("apt-get did not remove %s:\n%s", p, out)
		}
	}
	u := m.unit("Type", "ActiveState", "SubState", "ExecMainPID")
	if u["Type"] != "notify" || u["ActiveState"] != "active" {
		t.Errorf("after the swap the unit is %v, want the package's Type=notify unit running", u)
	}
	noCommand(t, m, "after the swap")
	if got := m.state(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the swap the node's state is %+v, was %+v: something re-ran", got, want)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
