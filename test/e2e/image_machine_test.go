package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// machine is a golden image booted under systemd-nspawn by test/systemd's
// lab.sh: a real systemd as PID 1, its own journal, the host's network (so
// 127.0.0.1 is the undercloud), the image read-only under an overlay whose
// changes are the machine's disk.
type machine struct {
	t    *testing.T
	name string
	dir  string // lab.sh's DIR
}

func labSh() string { return filepath.Join(repoRoot(), "test", "systemd", "lab.sh") }

func labEnv(extra ...string) []string {
	return append(append(os.Environ(), "LAB_OWNER_PID="+strconv.Itoa(os.Getpid())), extra...)
}

// bootMachine boots rootfs with the files of seed (path → content, 0600)
// in place, and returns once the machine's systemd has finished booting,
// which with the Type=notify unit includes the agent's first pass.
func bootMachine(t *testing.T, name, rootfs string, seed map[string]string) *machine {
	t.Helper()
	m := &machine{t: t, name: name, dir: filepath.Join(lab.Dir, "machines", name)}
	if _, err := Run(context.Background(), 2*time.Minute, Cmd{Argv: []string{labSh(), "down", m.dir}, Env: labEnv()}); err != nil {
		t.Fatalf("taking down an old %s: %v", name, err)
	}
	os.RemoveAll(m.dir)
	seedDir := t.TempDir()
	for p, content := range seed {
		f := filepath.Join(seedDir, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(context.Background(), 5*time.Minute, Cmd{Argv: []string{labSh(), "up", m.dir, seedDir},
		Env: labEnv("LAB_ROOTFS="+rootfs, "LAB_NETWORK=host", "LAB_BOOT_TIMEOUT=300")})
	if err != nil {
		t.Fatalf("booting %s: %v\n%s", name, err, tail(res.Stderr, 3000))
	}
	t.Cleanup(func() {
		env := labEnv()
		if t.Failed() {
			env = append(env, "LAB_KEEP=1")
			t.Logf("machine %s kept: %s (journal: journalctl -D %s/upper/var/log/journal)", name, m.dir, m.dir)
		}
		Run(context.Background(), 2*time.Minute, Cmd{Argv: []string{labSh(), "down", m.dir}, Env: env})
	})
	return m
}

// exec runs argv inside the machine.
func (m *machine) exec(timeout time.Duration, argv ...string) (string, error) {
	res, err := Run(context.Background(), timeout, Cmd{Argv: append([]string{labSh(), "exec", m.dir}, argv...), Env: labEnv()})
	if err != nil {
		return string(res.Stdout), fmt.Errorf("%s: %w\n%s%s", strings.Join(argv, " "), err, tail(res.Stdout, 2000), tail(res.Stderr, 2000))
	}
	return string(res.Stdout), nil
}

// must is exec that fails the test.
func (m *machine) must(argv ...string) string {
	m.t.Helper()
	out, err := m.exec(5*time.Minute, argv...)
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

// sh runs a shell command line inside, as an operator types it.
func (m *machine) sh(line string) (string, error) { return m.exec(5*time.Minute, "bash", "-c", line) }

// path is where the machine's file p is, seen from the host.
func (m *machine) path(p string) string { return filepath.Join(m.dir, "root", p) }

// reboot powers the machine off and boots it again on the same disk.
func (m *machine) reboot() {
	m.t.Helper()
	res, err := Run(context.Background(), 6*time.Minute, Cmd{Argv: []string{labSh(), "reboot", m.dir}, Env: labEnv("LAB_BOOT_TIMEOUT=300")})
	if err != nil {
		m.t.Fatalf("rebooting %s: %v\n%s", m.name, err, tail(res.Stderr, 3000))
	}
}

// unit reads properties of the agent's unit (systemctl show).
func (m *machine) unit(props ...string) map[string]string {
	m.t.Helper()
	out := m.must(append([]string{"systemctl", "show", "--timestamp=us+utc", "os-collect-config.service"}, prefixAll("-p", props)...)...)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	return got
}

func prefixAll(flag string, vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, flag, v)
	}
	return out
}

// waitUnit polls the unit until ok, at most timeout.
func (m *machine) waitUnit(timeout time.Duration, what string, ok func(map[string]string) bool, props ...string) map[string]string {
	m.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := m.unit(props...)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			out, _ := m.exec(time.Minute, "journalctl", "-u", "os-collect-config", "-n", "40", "--no-pager")
			m.t.Fatalf("%s: not within %v (unit: %v)\n%s", what, timeout, got, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// state is what the agent keeps on the machine's disk (the overlay's
// upper layer: what the machine wrote).
func (m *machine) state() NodeState { return Node{Dir: m.dir}.State() }
