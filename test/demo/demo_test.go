// Package demo runs `make demo`'s script (examples/demo.sh) as an
// operator would, as root and as an unprivileged user, and checks that it
// shows the whole chain (os-collect-config, os-refresh-config,
// os-apply-config, 55-heat-config with a script deployment,
// tripleo-agent-status) and that nothing it wrote is left outside, or
// after it, its scratch directory under TMPDIR.
package demo

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// nodePaths are the node's own state directories: the demo must neither
// create nor change anything under them.
var nodePaths = []string{
	"/run/tripleo-agent",
	"/var/run/tripleo-agent",
	"/var/lib/heat-config",
	"/var/run/heat-config",
	"/var/lib/os-collect-config",
	"/var/run/os-collect-config",
	"/var/run/os-refresh-config.lock",
}

// snapshot lists every path under the node's state directories with its
// mode, size and modification time ("absent" for a missing root).
func snapshot(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, root := range nodePaths {
		if _, err := os.Lstat(root); err != nil {
			fmt.Fprintf(&b, "%s absent\n", root)
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// world is a directory every user may traverse, holding the built
// programs (bin/) and, per run, the fake HOME and TMPDIR.
func world(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the demo (about 15 s)")
	}
	dir, err := os.MkdirTemp("", "demo-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A BIN of our own: other packages' tests may use the checkout's bin/.
	out, err := exec.CommandContext(ctx, "make", "-s", "-C", "../..", "build", "BIN="+filepath.Join(dir, "bin")).CombinedOutput()
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	// The demo's files too, readable by every user: the checkout may sit
	// in a directory that only its owner can enter (a clone in a mktemp
	// -d directory), which nobody could not run the demo from.
	for _, sub := range []string{"examples", "elements"} {
		if out, err := exec.CommandContext(ctx, "cp", "-R", "--preserve=mode", filepath.Join("../..", sub), dir).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", sub, err, out)
		}
	}
	if out, err := exec.CommandContext(ctx, "chmod", "-R", "a+rX", dir).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return dir
}

type result struct {
	out    string
	err    error
	tmpdir string
}

// runDemo runs `sh examples/demo.sh BIN` from dir (a copy of the demo's
// files beside BIN) with a fresh HOME and TMPDIR owned by uid (-1: the
// test's own user), and argv prefixing the command (e.g. setpriv).
func runDemo(t *testing.T, dir string, uid int, prefix []string, extraEnv ...string) result {
	t.Helper()
	run, err := os.MkdirTemp(dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	home, tmp := filepath.Join(run, "home"), filepath.Join(run, "tmp")
	for _, d := range []string{run, home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 && d != run {
			if err := os.Chown(d, uid, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append(append([]string{}, prefix...), "sh", "examples/demo.sh", filepath.Join(dir, "bin"))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8",
	}, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return result{out: out.String(), err: err, tmpdir: tmp}
}

func leftovers(t *testing.T, tmp string) []string {
	t.Helper()
	var names []string
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// shows is what the demo's output must hold: each stage of the chain and
// the deployment seen from its result and from tripleo-agent-status.
var shows = []struct{ what, re string }{
	{"the chain ran", `refresh completed on overcloud-controller-0`},
	{"os-apply-config rendered", `(?m)^-rw-r--r-- \S+\s+\d+  \./etc/nova/nova\.conf$`},
	{"heat-config's deployments file, rendered", `\./var/run/heat-config/heat-config\n`},
	{"the deployment's state file", `(?m)^-rw------- .* 2f1c9a57-6d1e-4c8b-9e3a-5b7d0c4e8a21\.json$`},
	{"the script hook's inputs", `\[INFO\] greeting=Welcome to`},
	{"its output", `"motd": "Welcome to overcloud-controller-0, a controller node"`},
	{"its stdout", `"deploy_stdout": "motd: Welcome to overcloud-controller-0, a controller node\\n"`},
	{"its status code", `"deploy_status_code": 0`},
	{"tripleo-agent-status's deployment line", `(?m)^\s+2f1c9a57-6d1e-4c8b-9e3a-5b7d0c4e8a21 ControllerMotdDeployment \[script\] status 0, NO_SIGNAL`},
	{"tripleo-agent-status's pass", `(?m)^\s+collector local\s+ok`},
	{"the second pass", `nothing changed, so nothing runs`},
}

func checkShows(t *testing.T, out string) {
	t.Helper()
	for _, s := range shows {
		if !regexp.MustCompile(s.re).MatchString(out) {
			t.Errorf("the demo's output does not show %s (/%s/)", s.what, s.re)
		}
	}
	for _, bad := range []string{"ermission denied", "[ERROR]", "[WARNING]", "Traceback"} {
		if strings.Contains(out, bad) {
			t.Errorf("the demo's output has %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestDemo: as the test's user (root on the build machines), the demo
// shows the deployment, touches none of the node's state directories, and
// removes its scratch directory; KEEP=1 keeps it and says where.
func TestDemo(t *testing.T) {
	dir := world(t)
	before := snapshot(t)
	r := runDemo(t, dir, -1, nil)
	if r.err != nil {
		t.Fatalf("sh examples/demo.sh: %v\n%s", r.err, r.out)
	}
	checkShows(t, r.out)
	if after := snapshot(t); after != before {
		t.Errorf("the demo changed the node's state directories:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if left := leftovers(t, r.tmpdir); len(left) != 0 {
		t.Errorf("the demo left %q in TMPDIR", left)
	}

	// An operator's umask of 0 would make the metadata copies world
	// writable, which os-collect-config refuses.
	t.Run("umask 000", func(t *testing.T) {
		r := runDemo(t, dir, -1, []string{"sh", "-c", `umask 000; exec "$0" "$@"`})
		if r.err != nil {
			t.Fatalf("umask 000; sh examples/demo.sh: %v\n%s", r.err, r.out)
		}
		checkShows(t, r.out)
	})

	t.Run("KEEP=1", func(t *testing.T) {
		r := runDemo(t, dir, -1, nil, "KEEP=1")
		if r.err != nil {
			t.Fatalf("KEEP=1 sh examples/demo.sh: %v\n%s", r.err, r.out)
		}
		m := regexp.MustCompile(`(?m)^KEEP=1: the scratch directory is kept: (\S+)$`).FindStringSubmatch(r.out)
		if m == nil {
			t.Fatalf("KEEP=1: no path printed:\n%s", r.out)
		}
		if filepath.Dir(m[1]) != r.tmpdir {
			t.Errorf("KEEP=1 printed %s, not in TMPDIR %s", m[1], r.tmpdir)
		}
		if _, err := os.Stat(filepath.Join(m[1], "root/var/lib/heat-config/deployed/2f1c9a57-6d1e-4c8b-9e3a-5b7d0c4e8a21.json")); err != nil {
			t.Errorf("KEEP=1: the kept directory has no deployment state: %v", err)
		}
	})
}

// TestDemoUnprivileged: as nobody, the demo works too, or fails with one
// line saying it needs root; either way it leaves nothing behind.
func TestDemoUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the demo as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	const nobody = 65534
	dir := world(t)
	before := snapshot(t)
	r := runDemo(t, dir, nobody, []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"})
	if r.err != nil {
		lines := strings.Split(strings.TrimSpace(r.out), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "needs root") {
			t.Errorf("as nobody: %v, and not one line saying it needs root:\n%s", r.err, r.out)
		}
	} else {
		checkShows(t, r.out)
	}
	if after := snapshot(t); after != before {
		t.Errorf("the demo changed the node's state directories:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if left := leftovers(t, r.tmpdir); len(left) != 0 {
		t.Errorf("as nobody, the demo left %q in TMPDIR", left)
	}
}
