package puppet_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/hooktest"
	"github.com/tripleo-go/agent/hooks/puppet"
)

func TestMain(m *testing.M) { hooktest.Main(m, puppet.Hook) }

type fixture struct {
	working, outputs, logs, hiera, bin, state, tool string
}

func setup(t *testing.T) *fixture {
	f := &fixture{working: t.TempDir(), outputs: t.TempDir(), logs: t.TempDir(), hiera: t.TempDir(), bin: t.TempDir()}
	f.state = filepath.Join(f.outputs, "test_state.json")
	f.tool = hooktest.Tool(t, f.bin, "config-tool-fake")
	return f
}

func (f *fixture) environ(t *testing.T, resp any, vars ...string) []string {
	return hooktest.Environ(t, f.bin, f.state, resp, append([]string{
		"HEAT_PUPPET_WORKING=" + f.working, "HEAT_PUPPET_OUTPUTS=" + f.outputs,
		"HEAT_PUPPET_LOGDIR=" + f.logs, "HEAT_PUPPET_HIERA_DATADIR=" + f.hiera,
		"HEAT_PUPPET_CMD=" + f.tool,
	}, vars...)...)
}

// data is the reference test's deployment with these options.
func data(options string) string {
	return `{"id": "1234", "creation_time": "2015-07-16T11:40:20", "name": "fake_resource_name", "group": "puppet",
	"options": ` + options + `,
	"inputs": [{"name": "foo", "value": "bar"}, {"name": "another", "value": "input"}],
	"outputs": [{"name": "first_output"}, {"name": "second_output"}],
	"config": "the puppet script"}`
}

const allOptions = `{"enable_hiera": true, "enable_facter": true, "enable_debug": true, "enable_verbose": true}`

func (f *fixture) success() hooktest.Response {
	return hooktest.Response{Stdout: "puppet success", Stderr: "thing happened", Files: map[string]string{
		filepath.Join(f.outputs, "1234.first_output"):  "output 1",
		filepath.Join(f.outputs, "1234.second_output"): "output 2",
	}}
}

func (f *fixture) argv(middle ...string) []string {
	argv := []string{f.tool, "apply", "--color", "false", "--detailed-exitcodes", "--logdest", "console"}
	return append(append(argv, middle...), filepath.Join(f.working, "1234.pp"))
}

var (
	debug   = []string{"--debug", "--logdest", "/var/log/puppet/heat-debug.log"}
	verbose = []string{"--verbose", "--logdest", "/var/log/puppet/heat-verbose.log"}
)

// test_hook_puppet.py: test_hook, test_hook_no_debug, test_hook_no_verbose,
// test_hook_puppet_failed and test_hook_hiera, one row each: the exact
// argv, the facts, the manifest, the result.
func TestHook(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options string
		fail    bool
		middle  []string
		result  string // golden file
	}{
		{"test_hook", allOptions, false, slices.Concat(debug, verbose), "hook.json"},
		{"test_hook_no_debug", `{"enable_hiera": true, "enable_facter": true, "enable_debug": false, "enable_verbose": true}`, false, verbose, "hook.json"},
		{"test_hook_no_verbose", `{"enable_hiera": true, "enable_facter": true, "enable_debug": true, "enable_verbose": false}`, false, debug, "hook.json"},
		{"test_hook_puppet_failed", allOptions, true, slices.Concat(debug, verbose), "failed.json"},
		{"test_hook_hiera", `{"enable_hiera": true, "enable_facter": true, "enable_debug": true, "enable_verbose": true, "modulepath": "MODULEPATH", "tags": "package,file"}`,
			false, slices.Concat([]string{"--modulepath", "MODULEPATH", "--tags", "package,file"}, debug, verbose), "hook.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			resp := f.success()
			if tc.fail {
				resp = hooktest.Response{Stdout: "puppet failed", Stderr: "bad thing happened", Returncode: 4}
			}
			r := hooktest.Run(t, puppet.Hook, data(strings.ReplaceAll(tc.options, "MODULEPATH", f.working)), f.environ(t, resp))
			if r.Code != 0 {
				t.Fatalf("exit %d: %s", r.Code, r.Stderr)
			}
			hooktest.Golden(t, tc.result, r.Stdout)
			st := hooktest.ReadState(t, f.state, 0)
			want := f.argv(tc.middle...)
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "MODULEPATH", f.working)
			}
			if !slices.Equal(st.Args, want) {
				t.Errorf("argv\n got %q\nwant %q", st.Args, want)
			}
			for name, want := range map[string]string{
				"FACTER_foo": "bar", "FACTER_another": "input", "FACTER_fqdn": hooktest.FQDN,
				"FACTER_heat_outputs_path":  filepath.Join(f.outputs, "1234"),
				"FACTER_deploy_config_name": "fake_resource_name",
			} {
				if st.Env[name] != want {
					t.Errorf("%s=%q, want %q", name, st.Env[name], want)
				}
			}
			manifest := filepath.Join(f.working, "1234.pp")
			if got := hooktest.ReadFile(t, manifest); got != "the puppet script" || hooktest.Mode(t, manifest) != 0o700 {
				t.Errorf("manifest %q mode %o", got, hooktest.Mode(t, manifest))
			}
			hieraFile := filepath.Join(f.hiera, "heat_config_fake_resource_name.json")
			if got := hooktest.ReadFile(t, hieraFile); got != `{"foo": "bar", "another": "input"}` || hooktest.Mode(t, hieraFile) != 0o600 {
				t.Errorf("hiera file %q mode %o", got, hooktest.Mode(t, hieraFile))
			}
			if st.Cwd != f.working {
				t.Errorf("cwd %s", st.Cwd)
			}
		})
	}
}

// --detailed-exitcodes: 0 (nothing changed) and 2 (changes) succeed;
// anything else is the deployment's status.
func TestDetailedExitCodes(t *testing.T) {
	for code, want := range map[int]float64{0: 0, 2: 0, 1: 1, 4: 4, 6: 6} {
		f := setup(t)
		r := hooktest.Run(t, puppet.Hook, data(`{}`), f.environ(t, hooktest.Response{Returncode: code}))
		if got := r.JSON(t)["deploy_status_code"]; got != want {
			t.Errorf("puppet exit %d: status %v, want %v", code, got, want)
		}
	}
}

// The output goes to <logdir>/<creation_time with - for : and T>-<id>-
// stdout.log and -stderr.log, where operators find it, and is read back.
func TestLogFiles(t *testing.T) {
	f := setup(t)
	hooktest.Run(t, puppet.Hook, data(`{}`), f.environ(t, f.success()))
	base := filepath.Join(f.logs, "2015-07-16-11-40-20-1234")
	if hooktest.ReadFile(t, base+"-stdout.log") != "puppet success" || hooktest.ReadFile(t, base+"-stderr.log") != "thing happened" {
		t.Error("log files")
	}
}

// enable_facter false: no input facts, only fqdn and heat_outputs_path;
// no hiera unless enabled. Null options are the defaults.
func TestFactsAndHieraOptions(t *testing.T) {
	for _, options := range []string{`{"enable_facter": false}`, `null`} {
		f := setup(t)
		r := hooktest.Run(t, puppet.Hook, data(options), f.environ(t, nil))
		if r.Code != 0 {
			t.Fatalf("%s: exit %d: %s", options, r.Code, r.Stderr)
		}
		st := hooktest.ReadState(t, f.state, 0)
		_, hasFoo := st.Env["FACTER_foo"]
		if hasFoo != (options == "null") || st.Env["FACTER_heat_outputs_path"] == "" || st.Env["FACTER_fqdn"] != hooktest.FQDN {
			t.Errorf("%s: facts %v", options, st.Env)
		}
		if _, ok := st.Env["FACTER_deploy_config_name"]; ok {
			t.Errorf("%s: hiera fact without enable_hiera", options)
		}
		if !slices.Equal(st.Args, f.argv()) {
			t.Errorf("%s: argv %q", options, st.Args)
		}
	}
}

// fqdn is `hostname -f`, trimmed; when it fails there is no fqdn fact and
// a warning.
func TestFQDN(t *testing.T) {
	f := setup(t)
	hostname := hooktest.Tool(t, f.bin, "hostname")
	environ := f.environ(t, []hooktest.Response{{Stdout: " host.example.org\n"}, {}})
	r := hooktest.RunEnv(t, puppet.Hook, hooks.Env{Stdin: strings.NewReader(data(`{}`)), Environ: environ})
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if st := hooktest.ReadState(t, f.state, 0); !slices.Equal(st.Args, []string{"hostname", "-f"}) {
		t.Errorf("hostname argv %q (%s)", st.Args, hostname)
	}
	if st := hooktest.ReadState(t, f.state, 1); st.Env["FACTER_fqdn"] != "host.example.org" {
		t.Errorf("FACTER_fqdn=%q", st.Env["FACTER_fqdn"])
	}

	f = setup(t)
	r = hooktest.RunEnv(t, puppet.Hook, hooks.Env{
		Stdin: strings.NewReader(data(`{}`)), Environ: f.environ(t, nil),
		Hostname: func(context.Context) (string, error) { return "", errors.New("exit status 1") },
	})
	if _, ok := hooktest.ReadState(t, f.state, 0).Env["FACTER_fqdn"]; ok || !strings.Contains(r.Stderr, "[WARNING] Failed to retrieve 'hostname -f' output\n") {
		t.Errorf("failing hostname: log %s", r.Stderr)
	}
}

// Decision: puppet not installed is a failed deployment (127, saying so),
// where the reference printed nothing and Heat saw success.
func TestPuppetNotInstalled(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, puppet.Hook, data(`{}`), f.environ(t, nil, "HEAT_PUPPET_CMD=puppet", "PATH="+f.bin))
	want := `{"deploy_stdout": "", "deploy_stderr": "puppet: command not found", "deploy_status_code": 127}`
	if r.Code != 0 || r.Stdout != want || !strings.Contains(r.Stderr, "[WARNING] puppet not installed yet\n") {
		t.Errorf("exit %d\n got %s\nwant %s\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

// The command line is logged with the facts, credentials hidden.
func TestRunningLineHidesCredentials(t *testing.T) {
	f := setup(t)
	d := `{"id": "1", "creation_time": "2015-07-16T11:40:20Z", "group": "puppet", "options": {}, "config": "",
	"inputs": [{"name": "deploy_password", "value": "hunter2-secret"}, {"name": "step", "type": "Number", "value": 3}]}`
	r := hooktest.Run(t, puppet.Hook, d, f.environ(t, nil))
	want := `[DEBUG] Running FACTER_fqdn="node.example.com"  FACTER_deploy_password="***"  FACTER_step="3"  FACTER_heat_outputs_path="` +
		filepath.Join(f.outputs, "1") + `"  ` + strings.Join(f.argvFor("1"), " ") + "\n"
	if !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "hunter2") {
		t.Errorf("log lacks %q:\n%s", want, r.Stderr)
	}
	if st := hooktest.ReadState(t, f.state, 0); st.Env["FACTER_deploy_password"] != "hunter2-secret" || st.Env["FACTER_step"] != "3" {
		t.Errorf("facts %v", st.Env)
	}
}

func (f *fixture) argvFor(id string) []string {
	argv := f.argv()
	argv[len(argv)-1] = filepath.Join(f.working, id+".pp")
	return argv
}

// Past HEAT_CONFIG_HOOK_TIMEOUT puppet is stopped: 124, and the note ends
// deploy_stderr after what puppet wrote.
func TestTimeout(t *testing.T) {
	f := setup(t)
	r := hooktest.Run(t, puppet.Hook, data(`{}`), f.environ(t, hooktest.Response{Stderr: "x", Sleep: 30}, hooks.TimeoutVar+"=0.3"))
	res := r.JSON(t)
	if res["deploy_status_code"] != 124.0 || !strings.HasSuffix(res["deploy_stderr"].(string), "timed out after 0.3 seconds (HEAT_CONFIG_HOOK_TIMEOUT) and was stopped") {
		t.Errorf("result %s", r.Stdout)
	}
}

// A creation_time or a name that would lead out of their directories
// cannot: '/' becomes '-' in log file names, and a name with '/' cannot
// name a hiera file (the reference joined both as they were).
func TestNamesStayInTheirDirectories(t *testing.T) {
	f := setup(t)
	d := `{"id": "1", "creation_time": "../../x", "name": "n", "group": "puppet", "inputs": [], "options": {}, "config": ""}`
	hooktest.Run(t, puppet.Hook, d, f.environ(t, hooktest.Response{Stdout: "x"}))
	if got := hooktest.ReadFile(t, filepath.Join(f.logs, "..-..-x-1-stdout.log")); got != "x" {
		t.Errorf("log %q", got)
	}
	d = `{"id": "1", "name": "../n", "group": "puppet", "inputs": [], "options": {"enable_hiera": true}, "config": ""}`
	r := hooktest.Run(t, puppet.Hook, d, f.environ(t, nil))
	if r.Code != 1 || !strings.Contains(r.Stderr, `[ERROR] deployment name "../n" cannot name a hiera data file`) {
		t.Errorf("exit %d, log %s", r.Code, r.Stderr)
	}
}
