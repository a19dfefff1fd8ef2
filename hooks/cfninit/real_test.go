package cfninit_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/hooks/cfninit"
	"github.com/tripleo-go/agent/hooks/hooktest"
)

// skipUnlessRequired skips, or fails when REQUIRE_REAL_TOOLS=1 (a machine
// that must run the real tools).
func skipUnlessRequired(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("REQUIRE_REAL_TOOLS") == "1" {
		t.Fatal(why + " (REQUIRE_REAL_TOOLS=1)")
	}
	t.Skip(why)
}

// realCfnInit is a command that runs heat-cfntools' cfn-init in a mount
// namespace of its own, where the test's directories stand in for
// /var/cache (its last_metadata, fixed in cfn-init when it runs without
// a stack) and /var/log (its cfn-init.log, fixed too): nothing is
// written on the host outside dir.
func realCfnInit(t *testing.T, dir string) string {
	cfnInit, err := exec.LookPath("cfn-init")
	if err != nil {
		skipUnlessRequired(t, "cfn-init (heat-cfntools) is not installed: the test of a real cfn-init is skipped")
	}
	unshare := []string{"unshare", "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = []string{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}
	}
	if b, err := exec.Command(unshare[0], append(unshare[1:], "true")...).CombinedOutput(); err != nil {
		skipUnlessRequired(t, "no private mount namespace for cfn-init's fixed paths: "+strings.TrimSpace(string(b)))
	}
	for _, p := range []string{"/var/cache", "/var/log"} {
		if strings.HasPrefix(dir, p+"/") {
			t.Skipf("the test's directory %s is under %s, which the namespace hides", dir, p)
		}
	}
	wrapper := filepath.Join(dir, "bin", "cfn-init")
	script := "#!/bin/sh\nexec " + strings.Join(unshare, " ") +
		` -- sh -c 'mount --bind "$1" /var/cache && mount --bind "$2" /var/log && exec "$3"' sh ` +
		filepath.Join(dir, "cache") + " " + filepath.Join(dir, "log") + " " + cfnInit + "\n"
	for _, d := range []string{"bin", "cache", "log", "out"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// The hook with the real cfn-init: the metadata's files section writes a
// file (with its mode), its commands section runs a command after it, in
// its cwd; a command that fails makes cfn-init, and the deployment, fail
// with status 1.
func TestRealCfnInit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cfn-init (a second)")
	}
	dir := t.TempDir()
	wrapper := realCfnInit(t, dir)
	out := filepath.Join(dir, "out")
	hostPaths := map[string]bool{}
	for _, p := range []string{"/var/cache/heat-cfntools", "/var/log/cfn-init.log"} {
		_, err := os.Stat(p)
		hostPaths[p] = err == nil
	}
	env := append(os.Environ(),
		cfninit.MetadataDirVar+"="+filepath.Join(dir, "cache", "heat-cfntools"), cfninit.CmdVar+"="+wrapper)

	for _, tc := range []struct {
		name, command string
		status        float64
		log           string
	}{
		{"applied", "cat motd > copied", 0, "01_copy has been successfully executed"},
		{"failing command", "cat motd > copied && false", 1, "Error processing metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(out, "copied"))
			config := map[string]any{"config": map[string]any{
				"files":    map[string]any{filepath.Join(out, "motd"): map[string]any{"content": "hello from heat\n", "mode": "000640"}},
				"commands": map[string]any{"01_copy": map[string]any{"command": tc.command, "cwd": out}},
			}}
			c, _ := json.Marshal(config)
			start := time.Now()
			r := hooktest.Run(t, cfninit.Hook, `{"id": "real-1", "name": "real", "group": "cfn-init", "inputs": [], "config": `+string(c)+`}`, env)
			t.Logf("hook with the real cfn-init: %v", time.Since(start).Round(time.Millisecond))
			res := r.JSON(t)
			if r.Code != 0 || res["deploy_status_code"] != tc.status {
				t.Fatalf("exit %d, result %s\n%s\ncfn-init.log:\n%s", r.Code, r.Stdout, r.Stderr, hooktest.ReadFile(t, filepath.Join(dir, "log", "cfn-init.log")))
			}
			if got := hooktest.ReadFile(t, filepath.Join(out, "motd")); got != "hello from heat\n" || hooktest.Mode(t, filepath.Join(out, "motd")) != 0o640 {
				t.Errorf("motd %q mode %o", got, hooktest.Mode(t, filepath.Join(out, "motd")))
			}
			if got := hooktest.ReadFile(t, filepath.Join(out, "copied")); got != "hello from heat\n" {
				t.Errorf("the command's file %q", got)
			}
			logged := hooktest.ReadFile(t, filepath.Join(dir, "log", "cfn-init.log"))
			if !strings.Contains(logged, "Opened local metadata /var/cache/heat-cfntools/last_metadata") || !strings.Contains(logged, tc.log) {
				t.Errorf("cfn-init.log lacks %q:\n%s", tc.log, logged)
			}
		})
	}
	// cfn-init rewrote the hook's file as its own cache, 0600.
	if m := hooktest.Mode(t, filepath.Join(dir, "cache", "heat-cfntools", "last_metadata")); m != 0o600 {
		t.Errorf("last_metadata mode %o", m)
	}
	for p, existed := range hostPaths {
		if _, err := os.Stat(p); err == nil && !existed {
			t.Errorf("%s was created on the host", p)
		}
	}
}
