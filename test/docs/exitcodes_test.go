package docs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// exitRows reads docs/exit-codes.md: for each program's section (its
// "## " title), the rows of its status table, keyed by the first word of
// the status cell ("0", "1", "N", "killed", ...), and their text.
func exitRows(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "docs/exit-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]string{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(line, "## "); ok {
			section = s
			rows[section] = map[string]string{}
			continue
		}
		cells := strings.Split(line, "|")
		if section == "" || len(cells) < 3 || cells[0] != "" {
			continue
		}
		status := strings.Fields(cells[1])
		if len(status) == 0 || status[0] == "status" || strings.HasPrefix(status[0], "---") {
			continue
		}
		rows[section][status[0]] = line
	}
	return rows
}

// exitCase runs one program on one documented case.
type exitCase struct {
	section, row string // the table and row of docs/exit-codes.md
	name         string
	doc          string // if set, in the row's text: the case is the one it names
	want         int
	argv         []string // argv[0] is a program of bin/
	env          []string // added to a minimal environment
	stdin        string
	setup        func(t *testing.T, dir string) // before the run; files under dir
}

// unexercised are rows this test does not run, with the test that does.
var unexercised = map[[2]string]string{
	{"os-refresh-config", "killed"}:         "refresh TestSignals* (refresh/refresh_test.go)",
	{"os-collect-config", "killed"}:         "collectors/occ and test/systemd (SIGTERM to the daemon)",
	{"55-heat-config", "143"}:               "heatconfig/improvements_test.go (SIGTERM during a hook)",
	{"heat-config-notify", "143"}:           "notify TestStopSaysStopped, test/chaos (a stop while signalling)",
	{"99-refresh-completed", "143"}:         "refreshcompleted TestStopWhileRetryingSaysStopped",
	{"20-os-net-config", "143"}:             "netconfig TestStopWhileWaitingForTheMetadataServer",
	{"heat-config-rebuild-deployed", "143"}: "rebuild TestWaitsForTheStateDirectoryLock (a stop while it waits)",
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

const scriptDeployment = `{"id": "d1", "name": "n1", "group": "script", "inputs": [{"name": "deploy_signal_transport", "value": "NO_SIGNAL"}], "outputs": [], "config": "#!/bin/sh\necho hi\n"}`

// D in argv, env and stdin stands for the case's scratch directory.
var exitCases = []exitCase{
	{section: "os-apply-config", row: "0", name: "renders", want: 0,
		argv: []string{"os-apply-config", "-t", "D/t", "-o", "D/o", "-m", "D/md.json", "--fallback-metadata"},
		setup: func(t *testing.T, d string) {
			write(t, d+"/t/etc/x.conf", "x={{x}}\n", 0o644)
			write(t, d+"/md.json", `{"x": 1}`, 0o644)
		}},
	{section: "os-apply-config", row: "1", name: "metadata not JSON", want: 1,
		argv:  []string{"os-apply-config", "-t", "D/t", "-o", "D/o", "-m", "D/md.json", "--fallback-metadata"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{`, 0o644); os.MkdirAll(d+"/t", 0o755) }},
	{section: "os-apply-config", row: "1", name: "boolean key false", want: 1,
		argv:  []string{"os-apply-config", "-m", "D/md.json", "--fallback-metadata", "--boolean-key", "b"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{"b": false}`, 0o644) }},
	{section: "os-apply-config", row: "2", name: "bad option", want: 2,
		argv: []string{"os-apply-config", "--no-such-option"}},
	{section: "os-apply-config", row: "255", name: "boolean key missing", want: 255,
		argv:  []string{"os-apply-config", "-m", "D/md.json", "--fallback-metadata", "--boolean-key", "b"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{}`, 0o644) }},

	{section: "os-refresh-config", row: "0", name: "no phases", want: 0,
		argv: []string{"os-refresh-config", "--lockfile", "D/lock"}, env: []string{"OS_REFRESH_CONFIG_BASE_DIR=D/base"},
		setup: func(t *testing.T, d string) { os.MkdirAll(d+"/base", 0o755) }},
	{section: "os-refresh-config", row: "1", name: "a script fails", want: 1,
		argv: []string{"os-refresh-config", "--lockfile", "D/lock"}, env: []string{"OS_REFRESH_CONFIG_BASE_DIR=D/base"},
		setup: func(t *testing.T, d string) { write(t, d+"/base/configure.d/10-fail", "#!/bin/sh\nexit 3\n", 0o755) }},
	{section: "os-refresh-config", row: "2", name: "--log-level WARNING", want: 2,
		argv: []string{"os-refresh-config", "--lockfile", "D/lock", "--log-level", "WARNING"}, env: []string{"OS_REFRESH_CONFIG_BASE_DIR=D/base"}},
	{section: "os-refresh-config", row: "11", name: "lock held", want: 11,
		argv: []string{"os-refresh-config", "--lockfile", "D/lock"}, env: []string{"OS_REFRESH_CONFIG_BASE_DIR=D/base"},
		setup: func(t *testing.T, d string) {
			os.MkdirAll(d+"/base", 0o755)
			f, err := os.Create(d + "/lock")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Fatal(err)
			}
		}},

	{section: "dib-run-parts", row: "0", name: "--list", want: 0,
		argv:  []string{"dib-run-parts", "--list", "D/parts"},
		setup: func(t *testing.T, d string) { write(t, d+"/parts/10-ok", "#!/bin/sh\n", 0o755) }},
	{section: "dib-run-parts", row: "1", name: "no directory", want: 1,
		argv: []string{"dib-run-parts"}},
	{section: "dib-run-parts", row: "N", name: "a script exits 7", want: 7,
		argv:  []string{"dib-run-parts", "D/parts"},
		setup: func(t *testing.T, d string) { write(t, d+"/parts/10-fail", "#!/bin/sh\nexit 7\n", 0o755) }},

	{section: "os-collect-config", row: "0", name: "--print-cachedir", want: 0,
		argv: []string{"os-collect-config", "--config-file", "/dev/null", "--print-cachedir"}},
	{section: "os-collect-config", row: "N", name: "one-time command exits 5", want: 5,
		argv: []string{"os-collect-config", "--config-file", "/dev/null", "--one-time", "--cachedir", "D/cache",
			"--backup-cachedir", "D/backup", "--local-path", "D/local", "-c", "exit 5", "local"},
		env:   []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status"},
		setup: func(t *testing.T, d string) { write(t, d+"/local/a.json", `{"a": 1}`, 0o600) }},
	{section: "os-collect-config", row: "1", name: "unknown collector", want: 1,
		argv: []string{"os-collect-config", "--config-file", "/dev/null", "--print", "nosuch"}},
	{section: "os-collect-config", row: "1", name: "invalid value in the file", want: 1, doc: "an invalid configuration value",
		argv:  []string{"os-collect-config", "--config-file", "D/occ.conf", "--print-cachedir"},
		setup: func(t *testing.T, d string) { write(t, d+"/occ.conf", "[DEFAULT]\npolling_interval = abc\n", 0o644) }},
	{section: "os-collect-config", row: "2", name: "bad option", want: 2,
		argv: []string{"os-collect-config", "--config-file", "/dev/null", "--no-such-option"}},
	{section: "os-collect-config", row: "2", name: "configuration file missing", want: 2, doc: "a `--config-file` that does not exist",
		argv: []string{"os-collect-config", "--config-file", "D/missing.conf", "--print-cachedir"}},
	{section: "os-collect-config", row: "2", name: "configuration file not parsable", want: 2, doc: "not in oslo.config's format",
		argv:  []string{"os-collect-config", "--config-file", "D/occ.conf", "--print-cachedir"},
		setup: func(t *testing.T, d string) { write(t, d+"/occ.conf", "no section, no equals\n", 0o644) }},
	{section: "os-collect-config", row: "2", name: "file of --config-dir not parsable", want: 2, doc: "one of `--config-dir` included",
		argv:  []string{"os-collect-config", "--config-file", "/dev/null", "--config-dir", "D/conf.d", "--print-cachedir"},
		setup: func(t *testing.T, d string) { write(t, d+"/conf.d/a.conf", "no section, no equals\n", 0o644) }},
	{section: "os-collect-config", row: "124", name: "--one-time-timeout", want: 124,
		argv: []string{"os-collect-config", "--config-file", "/dev/null", "--one-time", "--one-time-timeout", "1",
			"--cachedir", "D/cache", "--backup-cachedir", "D/backup", "--local-path", "D/local", "-c", "sleep 60", "local"},
		env:   []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status"},
		setup: func(t *testing.T, d string) { write(t, d+"/local/a.json", `{"a": 1}`, 0o600) }},

	{section: "55-heat-config", row: "0", name: "empty deployments", want: 0,
		argv:  []string{"tripleo-agent", "55-heat-config"},
		env:   []string{"HEAT_SHELL_CONFIG=D/heat-config", "HEAT_CONFIG_DEPLOYED=D/deployed", "HEAT_CONFIG_DEPLOYED_OLD=D/old"},
		setup: func(t *testing.T, d string) { write(t, d+"/heat-config", "[]", 0o600) }},
	{section: "55-heat-config", row: "1", name: "deployments file missing", want: 1,
		argv: []string{"tripleo-agent", "55-heat-config"},
		env:  []string{"HEAT_SHELL_CONFIG=D/heat-config", "HEAT_CONFIG_DEPLOYED=D/deployed", "HEAT_CONFIG_DEPLOYED_OLD=D/old"}},
	{section: "55-heat-config", row: "1", name: "bad hook timeout", want: 1,
		argv:  []string{"tripleo-agent", "55-heat-config"},
		env:   []string{"HEAT_SHELL_CONFIG=D/heat-config", "HEAT_CONFIG_DEPLOYED=D/deployed", "HEAT_CONFIG_DEPLOYED_OLD=D/old", "HEAT_CONFIG_HOOK_TIMEOUT=soon"},
		setup: func(t *testing.T, d string) { write(t, d+"/heat-config", "[]", 0o600) }},

	{section: "Hooks (`script`, `puppet`, `ansible`, `hiera`, `json-file`, `apply-config`, `cfn-init`, `docker-cmd`, `docker-compose`, `kubelet`, `salt`, `chef`)", row: "0", name: "script", want: 0,
		argv: []string{"tripleo-agent", "script"}, stdin: scriptDeployment,
		env: []string{"HEAT_SCRIPT_WORKING=D/w", "HEAT_SCRIPT_OUTPUTS=D/o"}},
	{section: "Hooks (`script`, `puppet`, `ansible`, `hiera`, `json-file`, `apply-config`, `cfn-init`, `docker-cmd`, `docker-compose`, `kubelet`, `salt`, `chef`)", row: "1", name: "not a deployment", want: 1,
		argv: []string{"tripleo-agent", "script"}, stdin: "not json",
		env: []string{"HEAT_SCRIPT_WORKING=D/w", "HEAT_SCRIPT_OUTPUTS=D/o"}},

	{section: "heat-config-rebuild-deployed", row: "0", name: "marks", want: 0,
		argv:  []string{"heat-config-rebuild-deployed"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "HEAT_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{"deployments": [`+scriptDeployment+`]}`, 0o600) }},
	{section: nodeSteps, row: "0", name: "no hosts key", want: 0,
		argv:  []string{"tripleo-agent", "51-hosts"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "NODECONFIG_ROOT=D/root"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{}`, 0o600) }},
	{section: nodeSteps, row: "1", name: "sysctl not an object", want: 1,
		argv:  []string{"tripleo-agent", "10-sysctl-apply-config"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "NODECONFIG_ROOT=D/root"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{"sysctl": 5}`, 0o600) }},
	{section: "20-os-net-config", row: "0", name: "no os_net_config", want: 0,
		argv:  []string{"tripleo-agent", "20-os-net-config"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "NODECONFIG_ROOT=D/root"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{}`, 0o600) }},
	{section: "20-os-net-config", row: "1", name: "os_net_config a number", want: 1, doc: "not an object with a `network_config` list",
		argv:  []string{"tripleo-agent", "20-os-net-config"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "NODECONFIG_ROOT=D/root"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{"os_net_config": 3}`, 0o600) }},
	{section: nodeSteps, row: "1", name: "network-gateway without /etc/sysconfig", want: 1, doc: "without `/etc/sysconfig`",
		argv: []string{"tripleo-agent", "25-set-network-gateway"},
		env:  []string{"OS_CONFIG_FILES=D/md.json", "NODECONFIG_ROOT=D/root"},
		setup: func(t *testing.T, d string) {
			write(t, d+"/md.json", `{"network-config": {"gateway-dev": "eth1"}}`, 0o600)
		}},
	{section: "heat-config-rebuild-deployed", row: "1", name: "deployments not a list", want: 1,
		argv:  []string{"heat-config-rebuild-deployed"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "HEAT_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{"deployments": {}}`, 0o600) }},

	{section: "50-heat-config-docker-cmd", row: "0", name: "no list", want: 0,
		argv: []string{"tripleo-agent", "50-heat-config-docker-cmd"}, env: []string{"HEAT_SHELL_CONFIG=D/heat-config"}},
	{section: "50-heat-config-docker-cmd", row: "1", name: "not a list", want: 1,
		argv: []string{"tripleo-agent", "50-heat-config-docker-cmd"}, env: []string{"HEAT_SHELL_CONFIG=D/heat-config"},
		setup: func(t *testing.T, d string) { write(t, d+"/heat-config", `{}`, 0o600) }},

	{section: "99-refresh-completed", row: "0", name: "nothing to signal", want: 0,
		argv:  []string{"tripleo-agent", "99-refresh-completed"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "OS_APPLY_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{}`, 0o600) }},
	{section: "99-refresh-completed", row: "1", name: "os-apply-config fails", want: 1,
		argv:  []string{"tripleo-agent", "99-refresh-completed"},
		env:   []string{"OS_CONFIG_FILES=D/md.json", "OS_APPLY_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) { write(t, d+"/md.json", `{`, 0o600) }},

	{section: "heat-config-notify", row: "0", name: "NO_SIGNAL", want: 0,
		argv: []string{"heat-config-notify", "D/d1.json"}, stdin: `{"deploy_status_code": 0}`,
		setup: func(t *testing.T, d string) { write(t, d+"/d1.json", scriptDeployment, 0o600) }},
	{section: "heat-config-notify", row: "1", name: "no argument", want: 1,
		argv: []string{"heat-config-notify"}},

	{section: "tripleo-agent-status", row: "0", name: "healthy", want: 0,
		argv: []string{"tripleo-agent-status"}, env: []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status", "HEAT_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) {
			writePass(t, d, `"converged": true, "command": {"command": "true", "exit": 0}`)
		}},
	{section: "tripleo-agent-status", row: "1", name: "not converged", want: 1,
		argv: []string{"tripleo-agent-status"}, env: []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status", "HEAT_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) {
			writePass(t, d, `"converged": false, "command": {"command": "false", "exit": 1}`)
		}},
	{section: "tripleo-agent-status", row: "1", name: "os-collect-config stopped on its configuration", doc: "stopped on its configuration", want: 1,
		argv: []string{"tripleo-agent-status", "--wait"}, env: []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status", "HEAT_CONFIG_DEPLOYED=D/deployed"},
		setup: func(t *testing.T, d string) {
			write(t, d+"/status/status.json", `{"version": 1, "started": "0001-01-01T00:00:00Z", "ended": "0001-01-01T00:00:00Z", "collectors": null,
 "converged": false, "stopped": {"at": "2026-11-25T10:00:05Z", "cause": "configuration", "error": "Unknown collectors ['local,heat']", "exit": 1}}`, 0o644)
			os.MkdirAll(d+"/deployed", 0o700)
		}},
	{section: "tripleo-agent-status", row: "2", name: "bad option", want: 2,
		argv: []string{"tripleo-agent-status", "--no-such-option"}},
	{section: "tripleo-agent-status", row: "3", name: "no pass yet", want: 3,
		argv: []string{"tripleo-agent-status"}, env: []string{"OS_COLLECT_CONFIG_STATUS_DIR=D/status", "HEAT_CONFIG_DEPLOYED=D/deployed"}},
}

const nodeSteps = "Node steps (`10-sysctl-apply-config`, `25-set-network-gateway`, `51-hosts`, `sysctl-set-value`, `sysctl-write-value`, `sysctl-append-value`)"

// writePass writes os-collect-config's record of a pass that ended now.
func writePass(t *testing.T, d, fields string) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	write(t, d+"/status/status.json", fmt.Sprintf(`{"version": 1, "started": %q, "ended": %q,
 "collectors": [{"name": "local", "result": "ok", "changed": true, "polled": %q}], %s}`, now, now, now, fields), 0o644)
	os.MkdirAll(d+"/deployed", 0o700)
}

// TestExitCodes runs each program on a case of each row of
// docs/exit-codes.md and compares the exit status with the row; every
// row has a case here or in unexercised.
func TestExitCodes(t *testing.T) {
	bin := built(t)
	rows := exitRows(t)
	covered := map[[2]string]bool{}
	for _, c := range exitCases {
		t.Run(c.section+"/"+c.name, func(t *testing.T) {
			text, ok := rows[c.section][c.row]
			if !ok {
				t.Fatalf("docs/exit-codes.md: section %q has no row %q", c.section, c.row)
			}
			if !strings.Contains(text, c.doc) {
				t.Errorf("docs/exit-codes.md: section %q, row %q does not say %q (%s): %s", c.section, c.row, c.doc, c.name, text)
			}
			covered[[2]string{c.section, c.row}] = true
			d := t.TempDir()
			if c.setup != nil {
				c.setup(t, d)
			}
			sub := strings.NewReplacer("D/", d+"/")
			argv := make([]string, len(c.argv))
			for i, a := range c.argv {
				argv[i] = sub.Replace(a)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, argv[0]), argv[1:]...)
			cmd.Dir = d
			cmd.Env = []string{"PATH=" + bin + ":/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + d, "TMPDIR=" + d, "LANG=C.UTF-8"}
			for _, e := range c.env {
				cmd.Env = append(cmd.Env, sub.Replace(e))
			}
			cmd.Stdin = strings.NewReader(c.stdin)
			out, err := cmd.CombinedOutput()
			got := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: exit %d, docs/exit-codes.md (%s, row %s) says %d\n%s", strings.Join(c.argv, " "), got, c.section, c.row, c.want, out)
			}
		})
	}
	for section, rs := range rows {
		for row := range rs {
			k := [2]string{section, row}
			if !covered[k] && unexercised[k] == "" {
				t.Errorf("docs/exit-codes.md: section %q, row %q: no case in TestExitCodes runs it", section, row)
			}
		}
	}
}
