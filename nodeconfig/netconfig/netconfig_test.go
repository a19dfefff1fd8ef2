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
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/nodeconfig/nodeconfigtest"
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
// refuse: expected/stderr is our one line, and nothing runs; fixed-*
// cases are good metadata on which we differ on purpose (docs/compat.md):
// expected/ is ours.
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
	err                              error // ours only
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
	// git keeps no modes but the executable bit, and a checkout's
	// depend on the umask: a case's files are 0644, as os-apply-config
	// renders them, and its safe defaults file 0600.
	filepath.WalkDir(to, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chmod(p, 0o644)
		}
		return nil
	})
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
	return runDir(t, dir, nil)
}

// runDir runs the program on the case in dir (an absolute path) under a
// temporary root; when given, before is called with the root once the
// case is laid out, before the run.
func runDir(t *testing.T, dir string, before func(root string)) outcome {
	t.Helper()
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
	if before != nil {
		before(root)
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
		stderr: strings.ReplaceAll(strings.ReplaceAll(stderr.String(), td, "testdata"), dir, "CASE"), err: err}
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

// layCase makes a case directory for the metadata md: the element's
// template rendered by our os-apply-config into before/etc (false when
// it fails on md), the udev rule the image has, one interface with a
// burnt-in address and a link, and case.env.
func layCase(t *testing.T, md, caseEnv string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"metadata.json":                    md,
		"case.env":                         caseEnv,
		"before/net/eth0/addr_assign_type": "0\n",
		"before/net/eth0/carrier":          "1\n",
		"before" + DHCPUdevRule:            `ACTION=="add", RUN+="dhcp-all-interfaces"` + "\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := nodeconfigtest.Render(t, "../../elements/os-net-config/os-apply-config", filepath.Join(dir, "metadata.json"), filepath.Join(dir, "before"))
	return dir, err == nil
}

// runWatched runs ours on the case in dir with its root frozen first;
// touched then says what changed under the root ("" for nothing).
func runWatched(t *testing.T, dir string) (got outcome, touched func() string) {
	t.Helper()
	var root, before string
	got = runDir(t, dir, func(r string) {
		root = r
		nodeconfigtest.Freeze(t, root)
		before = nodeconfigtest.Tree(t, root)
	})
	return got, func() string {
		if after := nodeconfigtest.Tree(t, root); after != before {
			return difftest.LineDiff(before, after)
		}
		return ""
	}
}

// Metadata that os-net-config could not read, or a Heat endpoint the
// ping could not use, is refused before anything runs: one line naming
// the key, exit 1, no command (no os-net-config, no ip link, no ping),
// no safe defaults written, the udev rule kept, nothing under the root
// touched. The reference ran os-net-config on it and fell back to DHCP
// on every interface with --cleanup (testdata/cases/bad-*).
func TestBadMetadataChangesNothing(t *testing.T) {
	const config = `{"network_config": [{"type": "interface", "name": "eth0", "use_dhcp": true}]}`
	endpoint := func(group, field, value string) string {
		return `{"os_net_config": ` + config + `, "os-collect-config": {"` + group + `": {"` + field + `": ` + value + `}}}`
	}
	for _, c := range []struct{ name, metadata, want string }{
		{"number", `{"os_net_config": 3}`, "os_net_config is a number, not an object (nor a string holding one)"},
		{"zero", `{"os_net_config": 0}`, "os_net_config is a number, not an object (nor a string holding one)"},
		{"false", `{"os_net_config": false}`, "os_net_config is a boolean, not an object (nor a string holding one)"},
		{"true", `{"os_net_config": true}`, "os_net_config is a boolean, not an object (nor a string holding one)"},
		{"list", `{"os_net_config": [` + config + `]}`, "os_net_config is a list, not an object (nor a string holding one)"},
		{"word", `{"os_net_config": "eth0"}`, "os_net_config is a string holding a string, not an object"},
		{"blank", `{"os_net_config": "  "}`, "os_net_config is a string holding null, not an object"},
		{"string list", `{"os_net_config": "[1, 2]"}`, "os_net_config is a string holding a list, not an object"},
		{"not yaml", `{"os_net_config": "network_config: ["}`, "os_net_config is a string that is not JSON or YAML: invalid YAML: line 1: did not find expected node content"},
		{"empty object", `{"os_net_config": {}}`, "os_net_config has no network_config list: os-net-config would refuse it"},
		{"no network_config", `{"os_net_config": {"interfaces": []}}`, "os_net_config has no network_config list: os-net-config would refuse it"},
		{"network_config an object", `{"os_net_config": {"network_config": {"type": "interface"}}}`, "os_net_config.network_config is an object, not a list: os-net-config would refuse it"},
		{"yaml network_config a number", `{"os_net_config": "network_config: 3"}`, "os_net_config.network_config is a number, not a list: os-net-config would refuse it"},
		{"heat.auth_url 7", endpoint("heat", "auth_url", `7`), "os-collect-config.heat.auth_url is a number, not a URL"},
		{"zaqar.auth_url an object", endpoint("zaqar", "auth_url", `{"url": "http://192.0.2.1:5000"}`), "os-collect-config.zaqar.auth_url is an object, not a URL"},
		{"cfn.metadata_url without a host", endpoint("cfn", "metadata_url", `"http://:8000/v1/"`), "os-collect-config.cfn.metadata_url is not an http:// or https:// URL with a host"},
		{"request.metadata_url a name", endpoint("request", "metadata_url", `"undercloud.example.com"`), "os-collect-config.request.metadata_url is not an http:// or https:// URL with a host"},
		{"heat.auth_url blank", endpoint("heat", "auth_url", `"  "`), "os-collect-config.heat.auth_url is not an http:// or https:// URL with a host"},
		{"heat.auth_url ftp", endpoint("heat", "auth_url", `"ftp://192.0.2.1:21/"`), "os-collect-config.heat.auth_url is not an http:// or https:// URL with a host"},
		{"heat.auth_url upper case", endpoint("heat", "auth_url", `"HTTP://192.0.2.1:5000/"`), "os-collect-config.heat.auth_url is not an http:// or https:// URL with a host"},
		{"heat.auth_url two lines", endpoint("heat", "auth_url", `"http://192.0.2.1:5000/\nhttp://192.0.2.2:5000/"`), "os-collect-config.heat.auth_url is not an http:// or https:// URL with a host"},
		{"heat.auth_url a space", endpoint("heat", "auth_url", `"http://192.0.2.1:5000/ v3"`), "os-collect-config.heat.auth_url is not an http:// or https:// URL with a host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, ok := layCase(t, c.metadata, "FAKE_ONC_STATUS=1 0\n")
			if !ok {
				t.Fatal("os-apply-config failed on the metadata")
			}
			got, touched := runWatched(t, dir)
			if want := Name + ": " + c.want + "\n"; exitcode.Of(got.err) != exitcode.Failure || got.stderr != want || got.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", exitcode.Of(got.err), got.stdout, got.stderr, want)
			}
			if got.log != "" || got.safeDefaults != nil {
				t.Errorf("commands run:\n%s\nsafe defaults %q", got.log, got.safeDefaults)
			}
			if diff := touched(); diff != "" {
				t.Errorf("the root changed:\n%s", diff)
			}
		})
	}
}

// What the ping reads is the host of the first endpoint set, a URL with
// a host: an IPv6 literal pings the address (the reference pinged
// "[fd00"), a URL without a port its host (the reference: "host/path";
// docs/compat.md), a local address is not pinged, empty or null
// endpoints are skipped, and none set is "No metadata IP found. Skipping.".
func TestEndpointsThatAreTaken(t *testing.T) {
	const config = `{"os_net_config": {"network_config": []}, "os-collect-config": `
	for _, c := range []struct{ name, endpoints, stdout, commands string }{
		{"ipv6 literal", `{"heat": {"auth_url": "https://[fd00::1]:13000/v3"}}`, "Trying to ping metadata IP fd00::1...SUCCESS\n", "ip -o a\nping -c 1 fd00::1\n"},
		{"ipv6 literal, local", `{"heat": {"auth_url": "https://[fd00::7]:13000/v3"}}`, "No metadata IP found. Skipping.\n", "ip -o a\n"},
		{"no port", `{"heat": {"auth_url": "https://undercloud/v3"}}`, "Trying to ping metadata IP undercloud...SUCCESS\n", "ip -o a\nping -c 1 undercloud\n"},
		{"user and port", `{"heat": {"auth_url": "http://u:p@192.0.2.4:5000/v3"}}`, "Trying to ping metadata IP 192.0.2.4...SUCCESS\n", "ip -o a\nping -c 1 192.0.2.4\n"},
		{"empty skipped", `{"cfn": {"metadata_url": ""}, "heat": {"auth_url": null}, "request": {"metadata_url": "http://192.0.2.3:8080/md"}, "zaqar": {"auth_url": 7}}`,
			"Trying to ping metadata IP 192.0.2.3...SUCCESS\n", "ip -o a\nping -c 1 192.0.2.3\n"},
		{"all empty", `{"cfn": {"metadata_url": ""}, "zaqar": {"auth_url": "\n"}}`, "No metadata IP found. Skipping.\n", ""},
		{"none", `{}`, "No metadata IP found. Skipping.\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, ok := layCase(t, config+c.endpoints+"}", "FAKE_ONC_STATUS=2\n")
			if !ok {
				t.Fatal("os-apply-config failed on the metadata")
			}
			local := "1: lo    inet 127.0.0.1/8 scope host lo\n2: eth0    inet6 fd00::7/64 scope global \n"
			if err := os.WriteFile(filepath.Join(dir, "ip-addr"), []byte(local), 0o644); err != nil {
				t.Fatal(err)
			}
			got, _ := runWatched(t, dir)
			if got.err != nil || !strings.HasSuffix(got.stdout, c.stdout) || !strings.HasSuffix(got.log, "---\n"+c.commands) {
				t.Errorf("exit %d, stdout %q, stderr %q, commands:\n%s\nwant %q and last the commands %q", exitcode.Of(got.err), got.stdout, got.stderr, got.log, c.stdout, c.commands)
			}
		})
	}
}
