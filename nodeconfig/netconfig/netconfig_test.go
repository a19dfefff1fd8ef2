package netconfig

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
)

// The cases are under testdata/cases/NAME: metadata.json; before/etc and
// before/net, the node's /etc and /sys/class/net; case.env, the fakes'
// answers (FAKE_ONC_STATUS: os-net-config's exit statuses, one per run;
// FAKE_PING_FAILS: how many pings fail first); ip-addr, what `ip -o a`
// prints. expected/ is what the reference element did, recorded by
// TestReference: status, stdout, stderr (its messages, without set -x's
// trace), log (the fakes' record of every command, in order, with the
// configuration files os-net-config was given) and etc.txt (the files of
// /etc/os-net-config and /etc/udev/rules.d with their modes), with
// dhcp_all_interfaces.yaml when written. bad-* cases are metadata we
// refuse: expected/stderr is our one line, and nothing runs.
func caseNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

type outcome struct {
	status, stdout, stderr, log, etc string
	safeDefaults                     []byte
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if _, err := os.Stat(from); err != nil {
		return
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	// git keeps no modes but the executable bit.
	p := filepath.Join(to, "os-net-config/dhcp_all_interfaces.yaml")
	if _, err := os.Stat(p); err == nil {
		os.Chmod(p, 0o600)
	}
}

func caseEnv(t *testing.T, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "case.env"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// runOurs runs the program on the case under a temporary root.
func runOurs(t *testing.T, name string) outcome {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata/cases", name))
	fakes, _ := filepath.Abs("testdata/fakebin")
	root := t.TempDir()
	copyTree(t, filepath.Join(dir, "before/etc"), filepath.Join(root, "etc"))
	copyTree(t, filepath.Join(dir, "before/net"), filepath.Join(root, NetClass))
	os.MkdirAll(filepath.Join(root, NetClass), 0o755)
	logPath := filepath.Join(t.TempDir(), "log")
	os.WriteFile(logPath, nil, 0o644)
	var stdout, stderr bytes.Buffer
	env := Env{
		Stdout: &stdout, Stderr: &stderr,
		Environ: append([]string{"PATH=" + fakes + ":/usr/bin:/bin", "OS_CONFIG_FILES=" + filepath.Join(dir, "metadata.json"),
			"FAKE_LOG=" + logPath, "FAKE_IP_ADDR=" + filepath.Join(dir, "ip-addr"), RootVar + "=" + root}, caseEnv(t, dir)...),
		Sleep: func(context.Context, time.Duration) error {
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
			if err == nil {
				f.WriteString("sleep 1\n")
				f.Close()
			}
			return err
		},
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	err := Run(context.Background(), nil, env)
	status := "0"
	if err != nil {
		status = "1"
	}
	log, _ := os.ReadFile(logPath)
	td, _ := filepath.Abs("testdata")
	o := outcome{status: status, stdout: strings.ReplaceAll(stdout.String(), root, ""), log: strings.ReplaceAll(string(log), root, ""),
		stderr: strings.ReplaceAll(stderr.String(), td, "testdata")}
	o.etc, o.safeDefaults = etcFiles(t, filepath.Join(root, "etc"))
	return o
}

// etcFiles lists the files of os-net-config and udev rules under etc
// ("MODE PATH" lines; overlayfs' whiteouts, removed files, left out) and
// the safe defaults file's bytes.
func etcFiles(t *testing.T, etc string) (string, []byte) {
	var lines []string
	for _, sub := range []string{"os-net-config", "udev/rules.d"} {
		filepath.WalkDir(filepath.Join(etc, sub), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type()&fs.ModeCharDevice != 0 {
				return nil
			}
			fi, err := d.Info()
			if err == nil && fi.Mode().IsRegular() {
				rel, _ := filepath.Rel(etc, path)
				lines = append(lines, fmt.Sprintf("%04o %s", fi.Mode().Perm(), rel))
			}
			return nil
		})
	}
	sort.Strings(lines)
	b, _ := os.ReadFile(filepath.Join(etc, "os-net-config/dhcp_all_interfaces.yaml"))
	return strings.Join(lines, "\n") + "\n", b
}

func (o outcome) compare(t *testing.T, want outcome) {
	t.Helper()
	for _, f := range []struct{ name, got, want string }{
		{"status", o.status, want.status}, {"stdout", o.stdout, want.stdout}, {"stderr", o.stderr, want.stderr},
		{"log", o.log, want.log}, {"etc", o.etc, want.etc}, {"dhcp_all_interfaces.yaml", string(o.safeDefaults), string(want.safeDefaults)},
	} {
		if f.got != f.want {
			t.Errorf("%s =\n%s\nwant\n%s", f.name, f.got, f.want)
		}
	}
}

func readExpected(t *testing.T, name string) outcome {
	t.Helper()
	dir := filepath.Join("testdata/cases", name, "expected")
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil && f != "dhcp_all_interfaces.yaml" {
			t.Fatal(err)
		}
		return string(b)
	}
	return outcome{status: read("status"), stdout: read("stdout"), stderr: read("stderr"), log: read("log"),
		etc: read("etc.txt"), safeDefaults: []byte(read("dhcp_all_interfaces.yaml"))}
}

// TestGolden: on every case we run the same commands in the same order,
// print the same, and leave the same files with the same modes as the
// reference element did.
func TestGolden(t *testing.T) {
	for _, name := range caseNames(t) {
		t.Run(name, func(t *testing.T) {
			got := runOurs(t, name)
			got.compare(t, readExpected(t, name))
		})
	}
}

// A stop (SIGTERM) while the metadata server is being waited for ends
// the wait at once: status Terminated, and no safe defaults are applied.
func TestStopWhileWaitingForTheMetadataServer(t *testing.T) {
	dir, _ := filepath.Abs("testdata/cases/ping-never")
	fakes, _ := filepath.Abs("testdata/fakebin")
	root := t.TempDir()
	copyTree(t, filepath.Join(dir, "before/etc"), filepath.Join(root, "etc"))
	logPath := filepath.Join(t.TempDir(), "log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, nil, Env{Stdout: &stdout, Stderr: &stderr,
		Environ: append([]string{"PATH=" + fakes + ":/usr/bin:/bin", "OS_CONFIG_FILES=" + filepath.Join(dir, "metadata.json"),
			"FAKE_LOG=" + logPath, RootVar + "=" + root}, caseEnv(t, dir)...),
		Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() },
	})
	if code := exitcode.Of(err); code != exitcode.Terminated {
		t.Errorf("exit %d (%v), want %d", code, err, exitcode.Terminated)
	}
	log, _ := os.ReadFile(logPath)
	if n := strings.Count(string(log), "ping "); n != 1 || strings.Contains(string(log), "--cleanup") {
		t.Errorf("log:\n%s\nwant one ping and no safe defaults", log)
	}
}
