package occ

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tripleo-go/agent/collectors/all"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/collectors/cfn"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/heat"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

type scenario struct {
	name  string
	args  []string
	files map[string]string // relative to a temp dir, which is also $HOME
}

var scenarios = []scenario{
	{name: "defaults", args: nil},
	{name: "flags", args: []string{"-c", "os-refresh-config", "--one-time", "--polling-interval", "5", "--cachedir=/c", "local", "heat_local"}},
	{name: "short and abbreviated", args: []string{"-i", "7.5", "--min-polling", "2", "-d"}},
	{name: "booleans both ways", args: []string{"--force", "--noforce", "--noone-time", "--print"}},
	{name: "group flags", args: []string{"--heat_local-path", "/a", "--heat_local-path", "/b", "--cfn-metadata-url", "http://x", "--keystone-cache_dir", "/k", "--zaqar-use-websockets", "--zaqar-nossl-certificate-validation", "--cfn-ca_certificate", "/ca"}},
	{name: "config file", args: []string{"--config-file", "$D/a.conf"}, files: map[string]string{"a.conf": `
[DEFAULT]
command = os-refresh-config
polling_interval = 10
collectors = local
collectors = heat_local
one_time = yes
# comment
; comment
[local]
path = /p1
path = /p2
[CFN]
metadata-url: http://cfn/v1/
secret_access_key = "s3cret"
[heat]
region_name = ''
[zaqar]
ssl_certificate_validation = On
[keystone]
cache_ttl = 60
`}},
	{name: "cli over file, later file wins", args: []string{"--config-file", "$D/a.conf", "--config-file", "$D/b.conf", "--polling-interval", "3", "ec2"}, files: map[string]string{
		"a.conf": "[DEFAULT]\npolling_interval = 10\ncachedir = /a\ncollectors = local\n[local]\npath = /a1\n",
		"b.conf": "[DEFAULT]\ncachedir = /b\n[local]\npath = /b1\npath = /b2\n",
	}},
	{name: "config dir after files", args: []string{"--config-file", "$D/a.conf", "--config-dir", "$D/d"}, files: map[string]string{
		"a.conf":   "[DEFAULT]\ncachedir = /a\ncommand = x\n",
		"d/2.conf": "[DEFAULT]\ncachedir = /d2\n",
		"d/1.conf": "[DEFAULT]\ncachedir = /d1\ncommand = y\n",
		"d/x.txt":  "[DEFAULT]\ncachedir = /ignored\n",
	}},
	{name: "command line and files in argument order", args: []string{"--cachedir", "/cli", "--heat_local-path", "/cli1", "--config-file", "$D/a.conf",
		"--heat_local-path", "/cli2", "-c", "cli", "--config-file", "$D/b.conf", "--noforce", "--polling-interval", "9"}, files: map[string]string{
		"a.conf": "[DEFAULT]\ncachedir = /a\ncommand = a\nforce = true\n[heat_local]\npath = /a1\n",
		"b.conf": "[DEFAULT]\ncommand = b\npolling_interval = 4\n[heat_local]\npath = /b1\n",
	}},
	{name: "default file, then the command line", args: []string{"--cachedir", "/cli"}, files: map[string]string{
		"os-collect-config.conf": "[DEFAULT]\ncachedir = /home\ncommand = from-home\n[local]\npath = /h\n",
	}},
	{name: "default file in HOME", args: nil, files: map[string]string{
		"os-collect-config.conf": "[DEFAULT]\ncommand = from-home\n[ec2]\ntimeout = 3\n",
	}},
	{name: "multiline and deprecated log names", args: []string{"--config-file", "$D/a.conf", "--logfile", "/l"}, files: map[string]string{
		"a.conf": "[DEFAULT]\ncommand = first\n  second\ndeployment_key = a\ndeployment_key = b\nlog_dir = /x\n[unknown]\nfoo = bar\n",
	}},
	{name: "templates", args: []string{"--config-file", "$D/a.conf", "--backup-cachedir", "${cachedir}/backup", "-c", "run $$HOME \\$x $1 $ end"}, files: map[string]string{
		"a.conf": "[DEFAULT]\ncachedir = /var/x\n[local]\npath = $cachedir/local\npath = ${heat.region_name}/l2\n[heat]\nauth_url = $region_name/v3\nregion_name = r1\nuser_id = $one_time\n",
	}},
	{name: "template naming no option", args: []string{"-c", "echo $OS_CONFIG_FILES"}},
	{name: "unknown collector (refused later, by the command)", args: []string{"local", "bogus"}},
	{name: "dashed keys in a file are not read", args: []string{"--config-file", "$D/a.conf"}, files: map[string]string{
		"a.conf": "[DEFAULT]\none-time = true\nmin_polling_interval: 4\n[ec2]\nmetadata-url = http://ignored\n",
	}},
	{name: "collectors as a JSON list in the file", args: []string{"--config-file", "$D/a.conf"}, files: map[string]string{
		"a.conf": "[DEFAULT]\ncollectors = [\"cfn\"]\n",
	}},
}

// The reference's oslo.config and ours read the same command lines and
// files into the same values.
func TestAgainstOsloConfig(t *testing.T) {
	difftest.Oracle(t)
	if err := exec.Command("/usr/bin/python3", "-c", "import os_collect_config.collect").Run(); err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("reference os_collect_config not importable: %v", err)
		}
		t.Skip("reference os_collect_config not installed")
	}
	// Every scenario through one run of the oracle (the imports are most
	// of its time), each command line parsed in a fork of its own.
	type oracleCase struct {
		Args []string `json:"args"`
		Home string   `json:"home"`
	}
	var cases []oracleCase
	for _, sc := range scenarios {
		dir := t.TempDir()
		for name, body := range sc.files {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(body), 0o644)
		}
		args := make([]string, len(sc.args))
		for i, a := range sc.args {
			args[i] = strings.ReplaceAll(a, "$D", dir)
		}
		cases = append(cases, oracleCase{args, dir})
	}
	input, _ := json.Marshal(cases)
	cmd := exec.Command("/usr/bin/python3", "testdata/oracle.py")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(scenarios) {
		t.Fatalf("oracle: %d answers for %d scenarios:\n%s", len(lines), len(scenarios), out)
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			args, dir, out := cases[i].Args, cases[i].Home, lines[i]
			var want map[string]any
			if err := json.Unmarshal([]byte(out), &want); err != nil {
				t.Fatalf("oracle output %s: %v", out, err)
			}
			env := config.Env{Root: dir + "/root", LookupEnv: func(k string) (string, bool) {
				if k == "HOME" {
					return dir, true
				}
				return "", false
			}}
			c, err := Parse(args, env)
			if e, ok := want["error"]; ok {
				if err == nil {
					t.Fatalf("reference refused (%v), ours accepted", e)
				}
				return
			}
			if err != nil {
				t.Fatalf("ours refused: %v", err)
			}
			got := c.Values()
			for k, w := range want {
				if k == "config_file" {
					continue
				}
				g, ok := got[k]
				if !ok {
					continue // an option we accept and ignore (oslo.log's)
				}
				if !sameValue(w, g) {
					t.Errorf("%s: reference %#v, ours %#v", k, w, g)
				}
			}
			var wantFiles []string
			for _, f := range want["config_file"].([]any) {
				wantFiles = append(wantFiles, f.(string))
			}
			if fmt.Sprint(wantFiles) != fmt.Sprint(filesGiven(c)) {
				t.Errorf("config files: reference %v, ours %v", wantFiles, c.ConfigFiles)
			}
		})
	}
}

// filesGiven is the files oslo reports as config_file: not those of a
// config dir.
func filesGiven(c *Config) []string {
	var out []string
	for _, f := range c.ConfigFiles {
		if !strings.Contains(f, "/d/") {
			out = append(out, f)
		}
	}
	return out
}

// sameValue compares a decoded JSON value of the reference with ours: None
// is an empty string, numbers compare as numbers.
func sameValue(w, g any) bool {
	switch wv := w.(type) {
	case nil:
		return g == nil || g == ""
	case float64:
		switch gv := g.(type) {
		case float64:
			return gv == wv
		case int:
			return float64(gv) == wv
		}
		return false
	case []any:
		gl, ok := g.([]string)
		if !ok || len(gl) != len(wv) {
			return false
		}
		for i := range wv {
			if wv[i] != gl[i] {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(w, g)
}

func TestErrorsNameTheOption(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.conf", []byte("[DEFAULT]\npolling_interval = soon\n[cfn]\nsecret_access_key = hunter2\n"), 0o644)
	_, err := Parse([]string{"--config-file", dir + "/a.conf"}, config.Env{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Option != "polling-interval" || ce.Value != "soon" || ce.Source != dir+"/a.conf" {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(dir+"/b.conf", []byte("[zaqar]\nuse_websockets = maybe\n"), 0o644)
	if _, err := Parse([]string{"--config-file", dir + "/b.conf"}, config.Env{}); err == nil || !strings.Contains(err.Error(), "zaqar.use-websockets") {
		t.Fatalf("error %v", err)
	}
	if _, err := Parse([]string{"--command-timeout", "-1"}, config.Env{}); !errors.As(err, &ce) || ce.Option != "command-timeout" || ce.Reason != "must not be negative" {
		t.Fatalf("a negative deadline: %v", err)
	}
	os.WriteFile(dir+"/c.conf", []byte("no section = here\n"), 0o644)
	if _, err := Parse([]string{"--config-file", dir + "/c.conf"}, config.Env{}); err == nil || !strings.Contains(err.Error(), dir+"/c.conf:1") {
		t.Fatalf("error %v", err)
	}
}

func TestCheckCollectors(t *testing.T) {
	c := newConfig(all.Collectors)
	c.Collectors = []string{"local", "bogus", "[\"cfn\"]"}
	want := `Unknown collectors ['bogus', '["cfn"]']. Valid collectors are: ['heat_local', 'ec2', 'cfn', 'heat', 'request', 'local', 'zaqar']`
	if err := c.CheckCollectors(); err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
	c.Collectors = names(all.Collectors)
	if err := c.CheckCollectors(); err != nil {
		t.Fatal(err)
	}
}

// A name with a comma or a space is a list written on one line, which
// the reference reads as one unknown collector: the error says how to
// write it.
func TestCheckCollectorsSaysOneNamePerLine(t *testing.T) {
	valid := ". Valid collectors are: ['heat_local', 'ec2', 'cfn', 'heat', 'request', 'local', 'zaqar']"
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"local,heat"}, "Unknown collectors ['local,heat']" + valid + `. The collectors option takes one name per line: ` +
			`instead of 'local,heat' write "collectors = local" and "collectors = heat", each on a line of its own (on the command line: local heat)`},
		{[]string{"local", "heat local"}, "Unknown collectors ['heat local']" + valid + `. The collectors option takes one name per line: ` +
			`instead of 'heat local' write "collectors = heat" and "collectors = local", each on a line of its own (on the command line: heat local)`},
		{[]string{`["cfn", "heat"]`, "ec2, local"}, `Unknown collectors ['["cfn", "heat"]', 'ec2, local']` + valid + `. The collectors option takes one name per line: ` +
			`instead of '["cfn", "heat"]' write "collectors = cfn" and "collectors = heat", each on a line of its own (on the command line: cfn heat); ` +
			`instead of 'ec2, local' write "collectors = ec2" and "collectors = local", each on a line of its own (on the command line: ec2 local)`},
		{[]string{"bogus"}, "Unknown collectors ['bogus']" + valid},
	} {
		c := newConfig(all.Collectors)
		c.Collectors = tc.names
		if err := c.CheckCollectors(); err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.names, err, tc.want)
		}
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/a.conf", []byte("[cfn]\nsecret_access_key = hunter2\n[heat]\npassword = pw\n"), 0o644)
	c, err := Parse([]string{"--config-file", dir + "/a.conf"}, config.Env{})
	if err != nil {
		t.Fatal(err)
	}
	cfnConf, heatConf := c.Sources["cfn"].(*cfn.Config), c.Sources["heat"].(*heat.Config)
	for _, s := range []string{fmt.Sprint(cfnConf.SecretAccessKey), fmt.Sprintf("%v %+v %#v", heatConf, *heatConf, heatConf.Creds.Password)} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "pw ") || strings.Contains(s, `"pw"`) {
			t.Fatalf("secret printed: %s", s)
		}
	}
	if cfnConf.SecretAccessKey.Reveal() != "hunter2" {
		t.Fatal("secret lost")
	}
}

// Each pass replaces the backup copy of the cache whole, so the pass
// record must live elsewhere: tripleo-agent-status would find none while
// a pass runs (found by tools/torture: /var/run is /run on Debian).
func TestStatusRecordIsNotInTheBackupDir(t *testing.T) {
	cfg, err := Parse(nil, config.Env{Stdout: io.Discard, Root: t.TempDir(),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	backup := strings.Replace(filepath.Clean(cfg.BackupCacheDir), "/var/run/", "/run/", 1)
	if rel, err := filepath.Rel(backup, agentstate.DefaultDir); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the status directory %s is inside the default backup-cachedir %s", agentstate.DefaultDir, cfg.BackupCacheDir)
	}
}
