package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/version"
)

// TestMain lets the tests run this test binary as the agent itself
// (TRIPLEO_AGENT_TEST_AS_MAIN=1): its first argument names the program.
func TestMain(m *testing.M) {
	if os.Getenv("TRIPLEO_AGENT_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// pathVars are every environment variable through which a program finds
// a file or directory it reads or writes; the sandbox points each into
// its root.
var pathVars = []string{
	"HOME", "TMPDIR", "OS_CONFIG_FILES", "OS_CONFIG_FILES_PATH", "OS_CONFIG_APPLIER_TEMPLATES",
	"OS_REFRESH_CONFIG_BASE_DIR", "OS_COLLECT_CONFIG_STATUS_DIR", "OS_APPLY_CONFIG_DEPLOYED",
	"HEAT_SHELL_CONFIG", "HEAT_CONFIG_DEPLOYED", "HEAT_CONFIG_DEPLOYED_OLD", "HEAT_CONFIG_HOOKS",
	"HEAT_SCRIPT_WORKING", "HEAT_SCRIPT_OUTPUTS", "HEAT_PUPPET_WORKING", "HEAT_PUPPET_OUTPUTS",
	"HEAT_PUPPET_LOGDIR", "HEAT_PUPPET_HIERA_DATADIR", "HEAT_ANSIBLE_WORKING", "HEAT_ANSIBLE_OUTPUTS",
	"HEAT_ANSIBLE_INVENTORY", "HEAT_HIERA_CONFIG", "HEAT_CFN_INIT_LAST_METADATA_DIR", "HEAT_DOCKER_COMPOSE_WORKING", "HEAT_KUBELET_MANIFESTS", "HEAT_DOCKER_CMD", "NODECONFIG_ROOT",
	"HEAT_SALT_WORKING", "SALT_MINION_CONFIG", "HEAT_CHEF_WORKING", "HEAT_CHEF_OUTPUTS",
}

// runAgent runs the agent (this test binary) with args, in dir, with env
// alone, and returns its stdout, stderr and exit status.
func runAgent(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = dir, append(env, "TRIPLEO_AGENT_TEST_AS_MAIN=1")
	cmd.Stdin = strings.NewReader(`{"id": "1", "group": "script", "config": "touch ran"}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// Every program answers --help, -h and --version with exit 0 and does
// nothing else: run in an empty directory with every path it could use
// pointed into an empty sandbox root (and a deployment on stdin), the root
// stays empty. (55-heat-config, heat-config-rebuild-deployed and
// 99-refresh-completed used to run on --help and created
// /var/run/heat-config/deployed.)
func TestHelpAndVersionHaveNoSideEffects(t *testing.T) {
	if raceDetector {
		// 105 runs of the race-instrumented binary took two minutes of
		// .ci/run; answering --help has no concurrency to race, and make
		// test's run without -race runs them all.
		t.Skip("runs the binary 105 times; covered without -race")
	}
	names := programNames()
	if len(names) != 35 {
		t.Errorf("%d programs, want the 11 programs, 12 hooks, 3 hook scripts and 9 node steps: %v", len(names), names)
	}
	for _, name := range names {
		for _, arg := range []string{"--help", "-h", "--version"} {
			t.Run(name+arg, func(t *testing.T) {
				// Each case waits on a process of its own: together.
				t.Parallel()
				root := t.TempDir()
				cwd := t.TempDir()
				env := []string{"PATH=" + filepath.Join(root, "bin"), "LANG=C.UTF-8"}
				for _, v := range pathVars {
					env = append(env, v+"="+filepath.Join(root, strings.ToLower(v)))
				}
				stdout, stderr, code := runAgent(t, cwd, env, name, arg)
				if code != 0 {
					t.Errorf("exit status %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
				}
				if arg == "--version" {
					if strings.Count(stdout, "\n") != 1 {
						t.Errorf("stdout %q, want one line", stdout)
					}
					if !strings.Contains(stdout+stderr, "tripleo-agent ") {
						t.Errorf("--version does not tell the build: stdout %q, stderr %q", stdout, stderr)
					}
				} else {
					if !strings.HasPrefix(stdout, "usage: ") || stderr != "" {
						t.Errorf("help: stdout %q..., stderr %q", head(stdout), stderr)
					}
				}
				for _, d := range []string{root, cwd} {
					if ents, _ := os.ReadDir(d); len(ents) > 0 {
						t.Errorf("%s %s created %s in the sandbox", name, arg, ents[0].Name())
					}
				}
			})
		}
	}
}

// The reference's version stays alone on stdout where scripts capture it
// ($(os-collect-config --version)); the build goes to stderr.
func TestReferenceVersionAloneOnStdout(t *testing.T) {
	for _, name := range []string{"os-apply-config", "os-config-applier", "os-collect-config", "os-refresh-config"} {
		stdout, stderr, code := runAgent(t, t.TempDir(), []string{"HOME=" + t.TempDir()}, name, "--version")
		if stdout != "12.0.0\n" || code != 0 {
			t.Errorf("%s --version: stdout %q, status %d; want \"12.0.0\\n\", 0", name, stdout, code)
		}
		if !strings.HasPrefix(stderr, "tripleo-agent ") || !strings.Contains(stderr, "commit ") {
			t.Errorf("%s --version: stderr %q does not tell the build", name, stderr)
		}
	}
}

// tripleo-agent under its own name lists its programs when asked or
// when given none or an unknown one, tells its build, and prints the
// manual pages.
func TestAgentCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // a substring; "" for empty
		stderr     string
		listsProgs bool
	}{
		{args: nil, code: exitcode.Usage, stderr: "name a program", listsProgs: true},
		{args: []string{"--help"}, code: 0, stdout: "usage: tripleo-agent", listsProgs: true},
		{args: []string{"-h"}, code: 0, stdout: "usage: tripleo-agent", listsProgs: true},
		{args: []string{"no-such-program"}, code: exitcode.Usage, stderr: `unknown program "no-such-program"`, listsProgs: true},
		{args: []string{"--version"}, code: 0, stdout: "tripleo-agent "},
		{args: []string{"--man", "os-collect-config"}, code: 0, stdout: ".TH \"OS-COLLECT-CONFIG\" 1"},
		{args: []string{"--man", "tripleo-agent"}, code: 0, stdout: ".TH \"TRIPLEO-AGENT\" 1"},
		{args: []string{"--man", "nope"}, code: exitcode.Usage, stderr: `unknown program "nope"`},
		{args: []string{"--bogus"}, code: exitcode.Usage, stderr: "unrecognized arguments: --bogus"},
		{args: []string{"--man"}, code: exitcode.Usage, stderr: "argument --man: expected one argument"},
		{args: []string{"--man=tripleo-agent", "extra"}, code: exitcode.Usage, stderr: "unrecognized arguments: extra"},
		{args: []string{"--completion=bash"}, code: 0, stdout: "complete -o default -F _tripleo_agent"},
	} {
		var stdout, stderr bytes.Buffer
		code := agentMain(tc.args, &stdout, &stderr, func(string) string { return "" })
		if code != tc.code {
			t.Errorf("%q: status %d, want %d", tc.args, code, tc.code)
		}
		if tc.stdout == "" && stdout.Len() > 0 || !strings.Contains(stdout.String(), tc.stdout) {
			t.Errorf("%q: stdout %q, want %q in it", tc.args, head(stdout.String()), tc.stdout)
		}
		if tc.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%q: stderr %q, want %q in it", tc.args, stderr.String(), tc.stderr)
		}
		if tc.listsProgs && !strings.Contains(strings.ReplaceAll(stdout.String()+stderr.String(), "\n", " "), "heat-config-rebuild-deployed") {
			t.Errorf("%q: the programs are not listed", tc.args)
		}
	}
}

// Each program's manual page is made from its help: every option the
// help lists is in the page, with its words.
func TestManualPagesHaveEveryOption(t *testing.T) {
	names := append(programNames(), "tripleo-agent")
	for _, name := range names {
		var help, page bytes.Buffer
		if name == "tripleo-agent" {
			agentMain([]string{"--help"}, &help, &bytes.Buffer{}, os.Getenv)
		} else {
			prog, _ := lookup(name)
			p := prog.cli()
			help.WriteString(p.Help())
		}
		if code := agentMain([]string{"--man", name}, &page, &bytes.Buffer{}, func(string) string { return "1764100000" }); code != 0 {
			t.Fatalf("--man %s: status %d", name, code)
		}
		text := strings.ReplaceAll(page.String(), `\-`, "-")
		if !strings.Contains(text, `"2025-11-25"`) {
			t.Errorf("%s: the page is not dated from SOURCE_DATE_EPOCH", name)
		}
		for _, opt := range helpOptions(help.String()) {
			if !strings.Contains(text, `\fB`+opt+`\fR`) {
				t.Errorf("%s: option %s of the help is not in the manual page", name, opt)
			}
		}
		if !strings.Contains(text, ".SH NAME\n"+name+` \- `) && !strings.Contains(text, ".SH NAME\n"+name+" - ") {
			t.Errorf("%s: no NAME line:\n%s", name, head(text))
		}
	}
}

// helpOptions are the option names a help lists (the words starting with
// a dash at the start of its option lines).
func helpOptions(help string) []string {
	var opts []string
	for _, l := range strings.Split(help, "\n") {
		if !strings.HasPrefix(l, "  -") {
			continue
		}
		for _, sp := range strings.Split(strings.TrimSpace(l), ", ") {
			name, _, _ := strings.Cut(sp, " ")
			if strings.HasPrefix(name, "-") && !slices.Contains(opts, name) {
				opts = append(opts, name)
			}
		}
	}
	return opts
}

func head(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}

// Every manual page renders without a warning (groff -ww), as lintian's
// groff-message check wants.
func TestManualPagesRender(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff")
	}
	for _, name := range append(programNames(), "tripleo-agent") {
		var page bytes.Buffer
		agentMain([]string{"--man", name}, &page, &bytes.Buffer{}, func(string) string { return "" })
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = &page
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("%s: groff: %v\n%s", name, err, out)
		}
	}
}

// The bash completion completes each program's options, the collectors
// of os-collect-config, the programs after tripleo-agent, and file names
// after an option that takes one; hooks' names (script, puppet) are
// other tools' commands and get none.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var script bytes.Buffer
	if code := agentMain([]string{"--completion", "bash"}, &script, &bytes.Buffer{}, os.Getenv); code != 0 {
		t.Fatalf("status %d", code)
	}
	for _, tc := range []struct {
		line string // the words typed; the last is completed
		want string // the completions, sorted, space separated
	}{
		{"os-collect-config --one-ti", "--one-time --one-time-timeout"},
		{"os-collect-config --config-file ", ""},
		{"os-collect-config --polling-interval 30 he", "heat heat_local"},
		{"os-apply-config --tem", "--templates"},
		{"dib-run-parts --l", "--list"},
		{"tripleo-agent heat-config-", "heat-config-notify heat-config-rebuild-deployed"},
		{"tripleo-agent os-refresh-config --print-", "--print-base --print-phases"},
		{"tripleo-agent --m", "--man"},
		{"heat-config-notify --", "--help --version"},
		{"script --", "NONE"},
		// An option's choices, in both spellings of its value.
		{"tripleo-agent-status --format ", "json text"},
		{"tripleo-agent-status --wait --format j", "json"},
		{"tripleo-agent-status --format =", "json text"},
		{"tripleo-agent-status --format = t", "text"},
		{"os-apply-config --key x --type ", "default dsn int netaddress netdevice raw swiftdevices username"},
		{"os-refresh-config --log-level ", "CRITICAL DEBUG ERROR INFO WARN"},
		{"tripleo-agent os-refresh-config --log-level D", "DEBUG"},
		{"tripleo-agent --completion ", "bash"},
		{"tripleo-agent --man os-c", "os-collect-config os-config-applier"},
	} {
		words := strings.Split(tc.line, " ")
		var q []string
		for _, w := range words {
			q = append(q, "'"+w+"'")
		}
		prog := script.String() + fmt.Sprintf(`
COMP_WORDS=(%s); COMP_CWORD=%d
spec=$(complete -p %s 2>/dev/null) || { echo NONE; exit; }
_tripleo_agent %s
printf '%%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
`, strings.Join(q, " "), len(words)-1, words[0], words[0])
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tc.line, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("%q: completions %q, want %q", tc.line, got, tc.want)
		}
	}
}

// The programs that get a completion and a manual page are those make
// install puts in bin.
func TestBinProgramsAreTheMakefiles(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(mk), "PROGRAMS := ")
	def, _, _ := strings.Cut(rest, "\n#")
	want := append([]string{"tripleo-agent"}, strings.Fields(strings.ReplaceAll(def, "\\", ""))...)
	if bin := binPrograms(); !slices.Equal(bin, want) {
		t.Errorf("binPrograms %q, the Makefile installs %q", bin, want)
	}
	for _, p := range binPrograms()[1:] {
		if prog, _ := lookup(p); prog.cli == nil {
			t.Errorf("%s has no manual", p)
		}
	}
}

// The footer of a manual page shows the package's version and the date
// apart, with the longest title and a snapshot build's version too: man
// centres the date whatever the left part's length, so a long left part
// ran into it ("...0123456-12026-11-25").
func TestManualFooterKeepsVersionAndDateApart(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff")
	}
	defer func(v string) { version.Package = v }(version.Package)
	footer := regexp.MustCompile(`^(\S.*\S) {2,}2026-11-25 {2,}[A-Z-]+\(1\)$`)
	for _, tc := range []struct{ pkg, left string }{
		{"1.2-1", "tripleo-agent 1.2-1"},
		{"1.2.3+4.g0123456-1", "tripleo-agent 1.2.3+4.g0123456-1"},
		{"1.2.3+14.g0123456-1", "1.2.3+14.g0123456-1"},
		{"0.0~git20261125.0123456-1", "0.0~git20261125.0123456-1"},
		{"0.0~git20261125.0123456+dirty-1", "0.0~git20261125.0123456+dirty-1"},
	} {
		version.Package = tc.pkg
		for _, name := range []string{"heat-config-rebuild-deployed", "tripleo-agent"} {
			var page bytes.Buffer
			agentMain([]string{"--man", name}, &page, &bytes.Buffer{}, func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return "1795600000" // 2026-11-25
				}
				return ""
			})
			// As man-db lays a page out on 80 columns (MANWIDTH=80).
			cmd := exec.Command(groff, "-man", "-Tascii", "-rLL=78n", "-rLT=78n")
			cmd.Stdin = &page
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: groff: %v", name, err)
			}
			lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			last := lines[len(lines)-1]
			if m := footer.FindStringSubmatch(last); m == nil || m[1] != tc.left {
				t.Errorf("%s, version %s: footer %q, want %q, the date and the title apart", name, tc.pkg, last, tc.left)
			}
		}
	}
}
