// Package difftest runs the Python reference os-apply-config and ours on the
// same cases and compares what an operator could observe: the exit status,
// stdout, the ERROR and WARNING log lines, and every file of the work
// directory afterwards (bytes, type, mode, owner, link target).
//
// Cases are txtar-style files in ../testdata/diff (see README.md there).
// The reference is /usr/bin/os-apply-config (Debian's
// python3-os-apply-config 12.0.0, installed by .ci/run); without it the
// tests skip, unless REQUIRE_REFERENCE=1, when they fail.
package difftest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

var (
	refBin  = envOr("OAC_REFERENCE", "/usr/bin/os-apply-config")
	oursBin string
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// refZygote runs the reference: a fork per run of a process that has
// imported what os_apply_config.apply_config imports (pbr's version
// lookup, yaml, pystache: most of a run's time), the module itself
// imported by each run, since it reads OS_CONFIG_FILES_PATH and
// OS_CONFIG_APPLIER_TEMPLATES and sets its logging up as it is
// imported (see difftest.Zygote). DIFFTEST_NO_ZYGOTE=1 runs refBin
// itself, as does an OAC_REFERENCE other than the default.
var refZygote *difftest.Zygote

func TestMain(m *testing.M) {
	difftest.ZygoteShim()
	difftest.Main(m, []string{"os-apply-config"}, func(dir string) {
		oursBin = filepath.Join(dir, "os-apply-config")
		if dir == "" || os.Getenv("DIFFTEST_NO_ZYGOTE") == "1" || refBin != "/usr/bin/os-apply-config" {
			return
		}
		if _, err := os.Stat(refBin); err != nil {
			return // the test says so
		}
		var err error
		refZygote, err = difftest.StartZygote("os_apply_config.apply_config", "main", refBin, "os-apply-config",
			"argparse", "json", "logging", "subprocess", "tempfile", "pystache.context", "yaml",
			"os_apply_config.collect_config", "os_apply_config.config_exception", "os_apply_config.oac_file",
			"os_apply_config.renderers", "os_apply_config.value_types", "os_apply_config.version")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	})
}

var knownFlags = map[string]bool{"ignore-stderr": true}

// Outcome is everything compared for one run: of stderr, the ERROR and
// WARNING lines, timestamps removed.
type Outcome struct {
	difftest.Outcome
	Logged []string
}

var timestamp = regexp.MustCompile(`^\[\d{4}/\d\d/\d\d \d\d:\d\d:\d\d [AP]M\] `)

func run(t *testing.T, c *difftest.Case, bin string) Outcome {
	t.Helper()
	dir := t.TempDir()
	for name, body := range c.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=/root"}, c.Env...)
	if c.Setup != "" {
		setup := exec.Command("/bin/sh", "-ec", c.Setup)
		setup.Dir, setup.Env = dir, env
		if out, err := setup.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	program := bin
	if bin == refBin && refZygote != nil {
		program, env = refZygote.Program, append(env, refZygote.Env...)
	}
	cmd := exec.CommandContext(ctx, program, c.Args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := Outcome{Outcome: difftest.Outcome{Stdout: stdout.String(), Stderr: stderr.String()}}
	if ee, ok := err.(*exec.ExitError); ok {
		o.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", bin, err)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		l = timestamp.ReplaceAllString(l, "")
		if strings.HasPrefix(l, "[ERROR] ") || strings.HasPrefix(l, "[WARNING] ") {
			o.Logged = append(o.Logged, l)
		}
	}
	o.Tree, o.Files = difftest.Tree(t, dir, "")
	return o
}

func TestAgainstReference(t *testing.T) {
	difftest.RequireReference(t, refBin)
	cases := difftest.Load(t, "../testdata/diff/*.txtar", knownFlags)
	if len(cases) < 60 {
		t.Errorf("only %d cases; the corpus must have at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ref := run(t, c, refBin)
			if strings.Contains(ref.Stderr, "Traceback") && !c.Flags["ignore-stderr"] {
				t.Fatalf("the reference crashed on this case; flag it or move it to the compat tests:\n%s", ref.Stderr)
			}
			ours := run(t, c, oursBin)
			compare(t, c, ref, ours)
		})
	}
}

func compare(t *testing.T, c *difftest.Case, ref, ours Outcome) {
	t.Helper()
	difftest.Compare(t, ref.Outcome, ours.Outcome)
	if !c.Flags["ignore-stderr"] {
		// Ours may add detail after the reference's words, never drop them.
		ok := len(ref.Logged) == len(ours.Logged)
		for i := 0; ok && i < len(ref.Logged); i++ {
			ok = strings.HasPrefix(ours.Logged[i], ref.Logged[i])
		}
		if !ok {
			t.Errorf("log lines:\nreference %q\nours      %q", ref.Logged, ours.Logged)
		}
	}
	difftest.LogStderr(t, ref.Outcome, ours.Outcome)
}
