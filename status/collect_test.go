package status

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// planted are credentials a node holds, each where it would be: the
// configuration (Heat's and Zaqar's passwords, the CFN secret key, a
// Swift temporary URL), the cache (a deployment's signal URL and
// password input), heat-config's state files (a hook's input), and the
// journal alone (a Keystone token).
var planted = []string{"PlantedHeatPass1", "PlantedCfnSecret2", "PlantedSig3", "PlantedSig4", "PlantedDeployPass5",
	"PlantedToken6", "PlantedDbPass7", "PlantedZaqarPass8"}

const nodeConf = `[DEFAULT]
command = os-refresh-config
collectors = heat
collectors = request

[heat]
auth_url = http://192.0.2.1:5000/v3
user_id = 0123abcd
password = PlantedHeatPass1

[cfn]
access_key_id = AKIDPLAIN
secret_access_key = PlantedCfnSecret2

[request]
metadata_url = http://192.0.2.1:8080/v1/AUTH_a/c/o?temp_url_sig=PlantedSig3&temp_url_expires=2000000000
`

const signalURL = `https://192.0.2.1:8000/v1/signal/arn%3Aopenstack%3Aheat?Timestamp=2026-11-25T10%3A00%3A00Z&SignatureMethod=HmacSHA256&AWSAccessKeyId=ak&SignatureVersion=2&Signature=PlantedSig4%2Bx`

// The journal stand-in prints what a node's journal holds: secrets in
// every form a program or a hook might print them.
const journalctl = `#!/bin/sh
echo "journalctl $*"
while IFS= read -r line; do printf '%s\n' "$line"; done <<'EOF'
2026-11-25T10:00:00+0000 node os-collect-config[1]: Source [heat] Unavailable.
2026-11-25T10:00:01+0000 node os-collect-config[1]: keystone refused user 0123abcd with PlantedHeatPass1
2026-11-25T10:00:02+0000 node os-collect-config[1]: signing with PlantedCfnSecret2
2026-11-25T10:00:03+0000 node os-collect-config[1]: GET http://192.0.2.1:8080/v1/AUTH_a/c/o?temp_url_sig=PlantedSig3&temp_url_expires=2000000000 failed
2026-11-25T10:00:04+0000 node os-collect-config[1]: hook said: PlantedSig4+x PlantedSig4%2Bx
2026-11-25T10:00:05+0000 node os-collect-config[1]: [2026] echo PlantedDeployPass5
2026-11-25T10:00:06+0000 node os-collect-config[1]: X-Auth-Token: gAAAAPlantedToken6
2026-11-25T10:00:07+0000 node os-collect-config[1]: mysql -uroot -pPlantedDbPass7
2026-11-25T10:00:08+0000 node os-collect-config[1]: zaqar: PlantedZaqarPass8 refused
EOF
`

// collectNode lays out a node under a scratch root, with stand-ins for
// journalctl, dpkg and os-collect-config on a PATH of its own.
func collectNode(t *testing.T) (root string, env Env, stdout *strings.Builder) {
	root = t.TempDir()
	put := func(path, data string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	put("etc/os-collect-config.conf", nodeConf, 0o600)
	put("etc/os-collect-config.conf.d/zaqar.conf", "[zaqar]\npassword = PlantedZaqarPass8\n", 0o600)
	deployments := `{"deployments": [{"id": "d1", "name": "one", "group": "script", "inputs": [
  {"name": "deploy_signal_id", "value": "` + signalURL + `"},
  {"name": "deploy_password", "value": "PlantedDeployPass5"}]}]}`
	put("var/lib/os-collect-config/heat.json", deployments, 0o600)
	put("var/lib/os-collect-config/heat.json.last", deployments, 0o600)
	put("var/lib/heat-config/deployed/d1.json", `{"id": "d1", "name": "one", "group": "script", "inputs": [
  {"name": "db_password", "value": "PlantedDbPass7"}]}`, 0o600)
	put("bin/journalctl", journalctl, 0o755)
	put("bin/dpkg", "#!/bin/sh\nprintf 'Package: tripleo-agent\\nStatus: install ok installed\\nVersion: 1.0-1\\n'\n", 0o755)
	put("bin/os-collect-config", "#!/bin/sh\necho 12.0.0\n", 0o755)
	statusDir := filepath.Join(root, "run/tripleo-agent")
	os.MkdirAll(statusDir, 0o755)
	agentstate.Write(filepath.Join(statusDir, agentstate.PassFile), agentstate.Pass{Version: 1, Started: t0, Ended: t0.Add(time.Second),
		Collectors: []agentstate.Collector{{Name: "request", Result: "unavailable",
			Reason: "http://192.0.2.1:8080/v1/AUTH_a/c/o?temp_url_sig=PlantedSig3&temp_url_expires=2000000000: 503"}}})
	stdout = &strings.Builder{}
	env = Env{Stdout: stdout, Stderr: stdout, Root: root, Now: func() time.Time { return t0.Add(time.Minute) },
		Environ: []string{"PATH=" + filepath.Join(root, "bin")}}
	return root, env, stdout
}

func readBundle(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = string(data)
	}
}

const top = "tripleo-agent-logs-20261125T100100Z/"

// --collect-logs writes one private tar.gz with the status, the journal,
// the listings, the versions and the configuration, and no secret the
// node holds appears anywhere in it: not in a member, not in a name.
func TestCollectLogsHasNoSecret(t *testing.T) {
	root, env, stdout := collectNode(t)
	out := filepath.Join(t.TempDir(), "bug.tar.gz")
	if code := exitcode.Of(Run(context.Background(), []string{"--collect-logs", "-o", out}, env)); code != 0 || stdout.String() != "Wrote "+out+"\n" {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("bundle %v (%v), want 0600", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
		t.Errorf("%d files beside the bundle, want it alone", len(entries))
	}
	members := readBundle(t, out)
	var names []string
	for name, data := range members {
		names = append(names, strings.TrimPrefix(name, top))
		for _, s := range planted {
			if strings.Contains(name, s) || strings.Contains(data, s) {
				t.Errorf("%s holds %s:\n%s", name, s, data)
			}
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "cache-listing.txt config.txt deployed-listing.txt journal.txt status.json status.txt versions.txt" {
		t.Errorf("members %s", got)
	}
	m := func(name string) string { return members[top+name] }
	for name, wants := range map[string][]string{
		"journal.txt": {"journalctl -u os-collect-config --no-pager -o short-iso-precise -n 20000\n", "Source [heat] Unavailable.", "X-Auth-Token: ***"},
		"config.txt": {"== " + root + "/etc/os-collect-config.conf\n", "password = ***\n", "auth_url = http://192.0.2.1:5000/v3\n",
			"access_key_id = AKIDPLAIN\n", "metadata_url = http://192.0.2.1:8080/v1/AUTH_a/c/o?***\n"},
		"cache-listing.txt":    {"-rw------- ", " heat.json\n", " heat.json.last\n"},
		"deployed-listing.txt": {" d1.json\n"},
		"versions.txt":         {"== os-collect-config --version\n12.0.0\n", "Version: 1.0-1\n", "== os-refresh-config --version\nnot found in PATH\n"},
		"status.txt":           {"status: degraded\n", "reason: source request: unavailable: http://192.0.2.1:8080/v1/AUTH_a/c/o?***"},
		"status.json":          {`"version": 2`},
	} {
		for _, want := range wants {
			if !strings.Contains(m(name), want) {
				t.Errorf("%s lacks %q:\n%s", name, want, m(name))
			}
		}
	}
	// Listings name files, never their contents.
	if strings.Contains(m("cache-listing.txt"), "deployments") || strings.Contains(m("deployed-listing.txt"), "inputs") {
		t.Errorf("a listing holds contents")
	}
}

// Without journalctl the bundle says so; -o is only for --collect-logs.
func TestCollectLogsWithoutJournal(t *testing.T) {
	root, env, _ := collectNode(t)
	os.Remove(filepath.Join(root, "bin/journalctl"))
	out := filepath.Join(t.TempDir(), "bug.tar.gz")
	if code := exitcode.Of(Run(context.Background(), []string{"--collect-logs", "--output", out}, env)); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if j := readBundle(t, out)[top+"journal.txt"]; !strings.HasPrefix(j, "journalctl: not found") {
		t.Errorf("journal.txt: %q", j)
	}
	if code := exitcode.Of(Run(context.Background(), []string{"-o", out}, env)); code != exitcode.Usage {
		t.Errorf("-o alone: exit %d", code)
	}
}

// The bundle's members are dated when it was made, never later: the
// tar format holds whole seconds, and rounding up (archive/tar's default)
// dated them up to half a second in the future, which GNU tar warns of
// once per member on extraction.
func TestCollectLogsTimesAreNotInTheFuture(t *testing.T) {
	_, env, _ := collectNode(t)
	made := t0.Add(time.Minute + 900*time.Millisecond)
	env.Now = func() time.Time { return made }
	out := filepath.Join(t.TempDir(), "bug.tar.gz")
	if code := exitcode.Of(Run(context.Background(), []string{"--collect-logs", "-o", out}, env)); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, h := range bundleHeaders(t, out) {
		if h.ModTime.After(made) {
			t.Errorf("%s: dated %s, after the bundle was made (%s)", h.Name, h.ModTime.UTC(), made)
		}
	}
}

// GNU tar extracts a bundle made just now without a warning.
func TestCollectLogsExtractsWithoutWarnings(t *testing.T) {
	tarPath, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar")
	}
	_, env, _ := collectNode(t)
	// Made in the second half of a second, when rounding to the
	// nearest second dates the members up to half a second ahead.
	if ns := time.Now().Nanosecond(); ns < 600e6 {
		time.Sleep(time.Duration(600e6 - ns))
	}
	env.Now = time.Now
	out := filepath.Join(t.TempDir(), "bug.tar.gz")
	if code := exitcode.Of(Run(context.Background(), []string{"--collect-logs", "-o", out}, env)); code != 0 {
		t.Fatalf("exit %d", code)
	}
	cmd := exec.Command(tarPath, "-xzf", out, "-C", t.TempDir())
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	msg, err := cmd.CombinedOutput()
	if err != nil || len(msg) > 0 {
		t.Errorf("tar -xzf: %v\n%s", err, msg)
	}
}

func bundleHeaders(t *testing.T, path string) []*tar.Header {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var hs []*tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
}

// A bundle that cannot be written is one error line naming the path
// given and what is wrong with its directory, never the hidden file the
// bundle is staged in; nothing is left behind.
func TestCollectLogsUnwritableOutput(t *testing.T) {
	_, env, _ := collectNode(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "a-dir"), 0o755)
	os.WriteFile(filepath.Join(dir, "a-file"), nil, 0o600)
	for _, tc := range []struct{ out, want string }{
		{dir + "/absent/x.tgz", "tripleo-agent-status: cannot write " + dir + "/absent/x.tgz: no such directory " + dir + "/absent\n"},
		{dir + "/a-file/x.tgz", "tripleo-agent-status: cannot write " + dir + "/a-file/x.tgz: " + dir + "/a-file is not a directory\n"},
		{dir + "/a-dir", "tripleo-agent-status: cannot write " + dir + "/a-dir: it is a directory\n"},
	} {
		var stderr strings.Builder
		env.Stderr = &stderr
		if code := exitcode.Of(Run(context.Background(), []string{"--collect-logs", "-o", tc.out}, env)); code != exitcode.Failure {
			t.Errorf("%s: exit %d", tc.out, code)
		}
		if stderr.String() != tc.want {
			t.Errorf("%s: stderr\n%q\nwant\n%q", tc.out, stderr.String(), tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries left in %s, want 2", len(entries), dir)
	}
}
