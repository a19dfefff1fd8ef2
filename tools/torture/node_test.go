package torture

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

func TestMain(m *testing.M) {
	lazyfs.Launched()
	code := m.Run()
	for _, dir := range installs {
		os.RemoveAll(dir)
		os.RemoveAll(dir + ".bin")
	}
	os.Exit(code)
}

// installed runs make install (PREFIX=/usr) into a directory of its own
// once per test binary and overlay (a go build -overlay file, "" for
// none: a deliberately weakened build), and returns that DESTDIR. The
// os-collect-config element's template is added, as in an image built
// with the elements: the chain's pass then rewrites
// /etc/os-collect-config.conf too.
func installed(t *testing.T, overlay string) string {
	t.Helper()
	installMu.Lock()
	defer installMu.Unlock()
	if dir, ok := installs[overlay]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "torture-install")
	if err != nil {
		t.Fatal(err)
	}
	installs[overlay] = dir
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "-C", repoRoot(), "install", "DESTDIR="+dir, "PREFIX=/usr", "BIN="+dir+".bin")
	cmd.Env = os.Environ()
	if overlay != "" {
		cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -overlay="+overlay))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	element := filepath.Join(repoRoot(), "elements/os-collect-config/os-apply-config") + "/."
	if out, err := exec.Command("cp", "-R", "--preserve=mode", element, filepath.Join(dir, "usr/libexec/os-apply-config/templates")).CombinedOutput(); err != nil {
		t.Fatalf("the os-collect-config element's template: %v\n%s", err, out)
	}
	return dir
}

var (
	installMu sync.Mutex
	installs  = map[string]string{}
)

// fault is what interrupts a run: a SIGKILL of every process (the
// filesystem keeps what they wrote), or a power cut (it keeps only what
// was made durable, and /run, a tmpfs, comes back empty).
type fault string

const (
	kill fault = "kill"
	cut  fault = "cut"
)

// node is a machine for the trials: a lazyfs as its root filesystem, its
// programs (make install's tree, at /opt/agent) run chrooted onto it in
// a PID namespace of their own.
type node struct {
	t     *testing.T
	fs    *lazyfs.Mount
	agent string // the installed tree on the host
	binds []lazyfs.Bind
}

// newNode mounts an empty lazyfs and lays a root filesystem out on it:
// the host's /usr (read-only) and /dev bound in, /bin and the like as
// Debian's merged-/usr links, /var/run a link to /run.
func newNode(t *testing.T, agent string) *node {
	t.Helper()
	if err := lazyfs.Available(); err != nil {
		if os.Getenv("REQUIRE_TORTURE") == "1" {
			t.Fatalf("REQUIRE_TORTURE=1 and no power cuts possible: %v", err)
		}
		t.Skipf("no power-cut trials (set REQUIRE_TORTURE=1 to fail instead): %v", err)
	}
	m, err := lazyfs.New(t.TempDir(), lazyfs.EmptyImage())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	})
	n := &node{t: t, fs: m, agent: agent}
	for _, d := range []string{"usr", "dev", "proc", "etc", "var/lib", "run", "opt/agent", "srv", "root"} {
		n.mkdir(d)
	}
	n.mkdir("tmp")
	os.Chmod(n.path("tmp"), 0o1777)
	for link, target := range map[string]string{"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin", "var/run": "../run"} {
		if err := os.Symlink(target, n.path(link)); err != nil {
			t.Fatal(err)
		}
	}
	// The ec2 collector reads a config drive first, found by blkid among
	// the devices: /dev is the host's, where collectors/difftest attaches
	// one (a loop device labelled config-2) while the trials may run.
	// The node has none.
	n.mkdir("opt/stub")
	if err := os.WriteFile(n.path("opt/stub/blkid"), []byte("#!/bin/sh\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"etc/passwd", "etc/group"} {
		if b, err := os.ReadFile("/" + f); err == nil {
			os.WriteFile(n.path(f), b, 0o644)
		}
	}
	n.binds = []lazyfs.Bind{{Host: "/usr", At: "usr"}, {Host: "/dev", At: "dev", Writable: true}, {Host: agent, At: "opt/agent"}}
	m.Sync()
	return n
}

// path is a path of the node as the host sees it.
func (n *node) path(rel string) string { return filepath.Join(n.fs.Dir, rel) }

func (n *node) mkdir(rel string) {
	n.t.Helper()
	if err := os.MkdirAll(n.path(rel), 0o755); err != nil {
		n.t.Fatal(err)
	}
}

// bind makes a host directory visible at at (under the root) to the
// processes started after.
func (n *node) bind(host, at string, writable bool) {
	n.mkdir(at)
	n.binds = append(n.binds, lazyfs.Bind{Host: host, At: at, Writable: writable})
	n.fs.Sync()
}

// env is the environment of the node's programs: the installed tree in
// place through the programs' variables (as test/install runs it).
func (n *node) env(extra ...string) []string {
	return append([]string{
		"PATH=/opt/stub:/opt/agent/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root", "LANG=C.UTF-8",
		"OS_REFRESH_CONFIG_BASE_DIR=/opt/agent/usr/libexec/os-refresh-config",
		"OS_CONFIG_APPLIER_TEMPLATES=/opt/agent/usr/libexec/os-apply-config/templates",
		"HEAT_CONFIG_HOOKS=/opt/agent/usr/libexec/heat-config/hooks",
		"HEAT_CONFIG_NOTIFY=/opt/agent/usr/bin/heat-config-notify",
	}, extra...)
}

// start starts a program on the node; out gets its output.
func (n *node) start(out io.Writer, env []string, args ...string) *lazyfs.Running {
	n.t.Helper()
	r, err := n.fs.Start(lazyfs.Proc{Args: args, Env: env, Root: n.fs.Dir, Binds: n.binds, MountProc: true, Stdout: out, Stderr: out})
	if err != nil {
		n.t.Fatal(err)
	}
	return r
}

// run runs a program on the node to its end.
func (n *node) run(env []string, args ...string) error {
	var out strings.Builder
	if err := n.start(&out, env, args...).Wait(); err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// minReboot is the shortest time from a power cut to the programs'
// next start: far shorter than any real boot.
const minReboot = 200 * time.Millisecond

// interrupt applies f to a running tree (which may have ended already:
// a cut after the end still loses what was not made durable).
func (n *node) interrupt(r *lazyfs.Running, f fault) {
	n.t.Helper()
	r.Kill()
	if f == kill {
		r.Wait()
		return
	}
	img := n.fs.Freeze()
	cutAt := time.Now()
	r.Wait()
	if err := n.fs.Restart(img); err != nil {
		n.t.Fatal(err)
	}
	// A reboot takes seconds, and the PIDs start again: os-apply-config
	// tells a dead writer whose PID came back by the live process's age,
	// known to 100 ms (applyconfig/writer.deadWriter). Rebooting faster
	// than any machine can made a leftover look live once in 400 cuts.
	time.Sleep(time.Until(cutAt.Add(minReboot)))
	// /run is a tmpfs: it comes back empty.
	entries, _ := os.ReadDir(n.path("run"))
	for _, e := range entries {
		os.RemoveAll(n.path("run/" + e.Name()))
	}
	n.fs.Sync()
}
