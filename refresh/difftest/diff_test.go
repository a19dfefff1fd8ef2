// Package difftest runs the reference os-refresh-config and dib-run-parts
// and ours on the same cases and compares what an operator or a hook script
// could observe: the exit status, stdout, the normalised stderr, whether
// processes were left running, and every file of the work directory
// afterwards (type, mode, owner, bytes, link target). The cases' scripts
// record what they saw (order, arguments, environment) into the work dir.
//
// Cases are txtar-style files in ../testdata/diff (format in NOTES.md
// there). The reference is Debian's python3-os-refresh-config 12.0.0
// (/usr/bin/os-refresh-config) and python3-dib-utils 0.0.11
// (/usr/bin/dib-run-parts); without them the tests skip, unless
// REQUIRE_REFERENCE=1, when they fail. They need root, and are skipped
// with -short (a full pass takes about 40 s).
//
// Environment knobs:
//   - ORC_REFERENCE, DIB_RUN_PARTS_REFERENCE: other reference programs.
//   - ORC_OURS: use this program as our os-refresh-config instead of
//     building cmd/tripleo-agent (e.g. the reference itself, to check the
//     corpus); DIB_RUN_PARTS_OURS likewise, defaulting to the
//     dib-run-parts next to ORC_OURS.
//   - DIFFTEST_SHOW=1: log what the reference did in each case.
package difftest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

const (
	programORC = "os-refresh-config"
	programDRP = "dib-run-parts"
)

var (
	refBins = map[string]string{
		programORC: envOr("ORC_REFERENCE", "/usr/bin/os-refresh-config"),
		programDRP: envOr("DIB_RUN_PARTS_REFERENCE", "/usr/bin/dib-run-parts"),
	}
	oursBins = map[string]string{}
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	if o := os.Getenv("ORC_OURS"); o != "" {
		oursBins[programORC] = o
		oursBins[programDRP] = envOr("DIB_RUN_PARTS_OURS", filepath.Join(filepath.Dir(o), programDRP))
		os.Exit(m.Run())
	}
	difftest.Main(m, []string{programORC, programDRP}, func(dir string) {
		for _, p := range []string{programORC, programDRP} {
			oursBins[p] = filepath.Join(dir, p)
		}
		if o := os.Getenv("DIB_RUN_PARTS_OURS"); o != "" {
			oursBins[programDRP] = o
		}
	})
}

// knownFlags are the words allowed in a -- flags -- section.
var knownFlags = map[string]bool{
	"dib-run-parts": true, // run dib-run-parts instead of os-refresh-config
	"ignore-stderr": true, // do not compare stderr
}

// Case is one parsed case file, with this suite's ways to run it.
type Case struct{ *difftest.Case }

// program is the program a case runs.
func program(c *Case) string {
	if c.Flags[programDRP] {
		return programDRP
	}
	return programORC
}

// placeholder matches $W and ${W}, but not $WORD.
var placeholder = regexp.MustCompile(`\$\{W\}|\$W([^A-Za-z0-9_]|$)`)

// subst replaces the work dir placeholder by dir.
func subst(s, dir string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if m == "${W}" {
			return dir
		}
		return dir + m[2:]
	})
}

// Outcome is everything compared for one run: stdout with the work dir
// replaced by W, stderr normalised, and the processes of the run still
// alive afterwards.
type Outcome struct {
	difftest.Outcome
	Normalised string
	Leftover   []string
}

var (
	orcTimestamp = regexp.MustCompile(`\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]`)
	// dib-run-parts prefixes every log line with "$(basename $0) $(date) ";
	// date(1)'s default format is "%a %b %e %H:%M:%S %Z %Y". Not anchored:
	// a script's output without a final newline runs into the prefix.
	drpDate = regexp.MustCompile(`dib-run-parts [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \S+ -?\d{4} `)
	// A profile line: printf "%-40s %10.3f\n" name seconds.
	profileLine = regexp.MustCompile(`(?m)^(dib-run-parts DATE \S+ +)-?\d+\.\d{3}$`)
)

func normaliseStderr(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "W")
	s = orcTimestamp.ReplaceAllString(s, "[TS]")
	s = drpDate.ReplaceAllString(s, "dib-run-parts DATE ")
	s = profileLine.ReplaceAllString(s, "${1}N.NNN")
	return s
}

// baseEnv is the fixed environment of every run, before the case's lines.
func baseEnv(dir string) map[string]string {
	return map[string]string{
		"PATH":                       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME":                       "/root",
		"LANG":                       "C.UTF-8",
		"TZ":                         "UTC",
		"OS_REFRESH_CONFIG_BASE_DIR": filepath.Join(dir, "base"),
	}
}

func (c *Case) environ(dir string) []string {
	env := baseEnv(dir)
	for _, l := range c.Env {
		l = subst(l, dir)
		if name, ok := strings.CutPrefix(l, "-"); ok {
			delete(env, name)
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// args returns the program's arguments in dir.
func (c *Case) args(dir string) []string {
	var args []string
	hasLock := false
	for _, a := range c.Args {
		a = subst(a, dir)
		// argparse accepts any unambiguous prefix of --lockfile.
		if strings.HasPrefix(a, "--lock") {
			hasLock = true
		}
		args = append(args, a)
	}
	if program(c) == programORC && !hasLock {
		args = append([]string{"--lockfile", filepath.Join(dir, "lock")}, args...)
	}
	return args
}

func (c *Case) run(t *testing.T, bin string) Outcome {
	t.Helper()
	dir := t.TempDir()
	for name, body := range c.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(subst(string(body), dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := c.environ(dir)
	if c.Setup != "" {
		setup := exec.Command("/bin/sh", "-ec", subst(c.Setup, dir))
		setup.Dir, setup.Env = dir, env
		// Background helpers (a lock holder) stay in this group, and are
		// killed once the program has run.
		setup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		setup.WaitDelay = 5 * time.Second
		out, err := setup.CombinedOutput()
		if setup.Process != nil {
			defer syscall.Kill(-setup.Process.Pid, syscall.SIGKILL)
		}
		if err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	// The reference's dib-run-parts leaves its mktemp profile dir in /tmp
	// whenever a script fails; remove the ones this run left.
	before := profileDirs()
	defer func() {
		for d := range profileDirs() {
			if !before[d] {
				os.RemoveAll(d)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.args(dir)...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within the deadline\nstderr:\n%s", bin, stderr.String())
	}
	o := Outcome{
		Outcome:    difftest.Outcome{Stdout: strings.ReplaceAll(stdout.String(), dir, "W"), Stderr: stderr.String()},
		Normalised: normaliseStderr(stderr.String(), dir),
	}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
		if o.Code < 0 {
			t.Fatalf("%s: %v", bin, err)
		}
	} else if err != nil && err != exec.ErrWaitDelay {
		t.Fatalf("running %s: %v", bin, err)
	}
	o.Leftover = leftovers(cmd.Process.Pid)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	o.Tree, o.Files = difftest.Tree(t, dir, dir)
	return o
}

func profileDirs() map[string]bool {
	m := map[string]bool{}
	paths, _ := filepath.Glob("/tmp/profiledir.??????")
	for _, p := range paths {
		m[p] = true
	}
	return m
}

// leftovers lists the live (not zombie) processes of group pgid, waiting a
// little for processes being killed to go away.
func leftovers(pgid int) []string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		var live []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
			s := string(stat)
			i := strings.LastIndexByte(s, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(s[i+1:])
			if len(f) < 3 || f[0] == "Z" || f[0] == "X" || f[2] != strconv.Itoa(pgid) {
				continue
			}
			comm := s[strings.IndexByte(s, '(')+1 : i]
			live = append(live, comm)
		}
		if len(live) == 0 || time.Now().After(deadline) {
			sort.Strings(live)
			return live
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func loadCases(t *testing.T) []*Case {
	var cases []*Case
	for _, c := range difftest.Load(t, "../testdata/diff/*.txtar", knownFlags) {
		cases = append(cases, &Case{c})
	}
	return cases
}

var caseName = regexp.MustCompile(`^\d{3}-[a-z0-9][a-z0-9-]*$`)

// TestCorpus checks the case files themselves; it needs no reference.
func TestCorpus(t *testing.T) {
	cases := loadCases(t)
	if len(cases) < 25 {
		t.Errorf("only %d cases; the corpus must have at least 25", len(cases))
	}
	nums := map[string]string{}
	for _, c := range cases {
		if !caseName.MatchString(c.Name) {
			t.Errorf("%s: name is not NNN-short-name", c.Name)
		}
		if prev, ok := nums[c.Name[:3]]; ok {
			t.Errorf("%s and %s share a number", prev, c.Name)
		}
		nums[c.Name[:3]] = c.Name
		if strings.TrimSpace(c.Comment) == "" {
			t.Errorf("%s: no comment saying what the case checks", c.Name)
		}
	}
}

func TestAgainstReference(t *testing.T) {
	difftest.RequireReference(t, refBins[programORC], refBins[programDRP])
	cases := loadCases(t)
	if len(cases) < 25 {
		t.Errorf("only %d cases; the corpus must have at least 25", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			prog := program(c)
			ref := c.run(t, refBins[prog])
			if strings.Contains(ref.Stderr, "Traceback") && !c.Flags["ignore-stderr"] {
				t.Fatalf("the reference crashed on this case; flag it or move it to the unit tests:\n%s", ref.Stderr)
			}
			if os.Getenv("DIFFTEST_SHOW") == "1" {
				t.Logf("reference: exit %d, leftover %q\nstdout:\n%s\nstderr:\n%s\ntree:\n%s",
					ref.Code, ref.Leftover, ref.Stdout, ref.Normalised, strings.Join(ref.Tree, "\n"))
				for _, name := range sortedKeys(ref.Files) {
					if _, given := c.Files[name]; !given {
						t.Logf("file %s:\n%s", name, ref.Files[name])
					}
				}
			}
			ours := c.run(t, oursBins[prog])
			compare(t, c, ref, ours)
		})
	}
}

func compare(t *testing.T, c *Case, ref, ours Outcome) {
	t.Helper()
	difftest.Compare(t, ref.Outcome, ours.Outcome)
	if !c.Flags["ignore-stderr"] && ref.Normalised != ours.Normalised {
		t.Errorf("normalised stderr differs (- reference, + ours):\n%s", difftest.LineDiff(ref.Normalised, ours.Normalised))
	}
	if strings.Join(ref.Leftover, " ") != strings.Join(ours.Leftover, " ") {
		t.Errorf("processes left running: reference %q, ours %q", ref.Leftover, ours.Leftover)
	}
	difftest.LogStderr(t, ref.Outcome, ours.Outcome)
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
