// Command oacbench benchmarks our os-apply-config against the Python
// reference on a generated corpus (1000 templates, ~700 KB of metadata in
// three deep-merged files). It is what `make bench` runs for
// os-apply-config.
//
// Cases: "fresh" renders into an empty directory; "steady" renders into a
// complete previous render after one service's values changed (the common
// case on a node: os-collect-config saw a small change). Both programs run
// alternately as whole processes; wall time and peak RSS of the child are
// measured, and the two output trees are compared once per case, because a
// benchmark of wrong output is meaningless.
//
// Exit status: 0 when the benchmark ran (targets are informational), 1 on
// an output mismatch or a failing program, 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// config is the parsed command line.
type config struct {
	ref, ours string
	runs      int
	warmup    int
	workdir   string
	keep      bool
	which     string // fresh, steady or all
	seed      uint64
	verbose   bool
	corpusTo  string // write the corpus there and stop
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == workerFlag {
		if err := boundWorker(args[1:], stdout); err != nil {
			fmt.Fprintf(stderr, "oacbench: %v\n", err)
			return 1
		}
		return 0
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	if cfg.corpusTo != "" {
		// For other harnesses (tools/torture): the same corpus, no timing.
		paths, err := buildCorpus(cfg.seed).write(cfg.corpusTo)
		if err != nil {
			fmt.Fprintf(stderr, "oacbench: %v\n", err)
			return 1
		}
		fmt.Fprintln(stdout, strings.Join(append([]string{paths.templates}, paths.meta...), "\n"))
		fmt.Fprintln(stdout, paths.modified[len(paths.modified)-1])
		return 0
	}
	// Interrupts cancel the running child and still clean the workdir up.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := benchmark(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "oacbench: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("oacbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.ref, "ref", "/usr/bin/os-apply-config", "reference os-apply-config")
	fs.StringVar(&cfg.ours, "ours", "bin/os-apply-config", "our os-apply-config (built by make build)")
	fs.IntVar(&cfg.runs, "runs", 7, "timed runs per program and case")
	fs.IntVar(&cfg.warmup, "warmup", 1, "untimed warm-up runs per program and case")
	fs.StringVar(&cfg.workdir, "workdir", "", "scratch directory (default: a new temporary directory)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the scratch directory (corpus, outputs, logs)")
	fs.StringVar(&cfg.which, "case", "all", "case to run: fresh, steady or all")
	fs.Uint64Var(&cfg.seed, "seed", 1, "corpus generator seed")
	fs.BoolVar(&cfg.verbose, "v", false, "print every run's wall time and peak RSS")
	fs.StringVar(&cfg.corpusTo, "write-corpus", "", "only write the corpus under this directory and print its paths: templates, the three metadata files, the modified third")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var problems []string
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if cfg.runs < 1 {
		problems = append(problems, "-runs must be at least 1")
	}
	if cfg.warmup < 0 {
		problems = append(problems, "-warmup must not be negative")
	}
	if cfg.which != "fresh" && cfg.which != "steady" && cfg.which != "all" {
		problems = append(problems, fmt.Sprintf("-case %q: want fresh, steady or all", cfg.which))
	}
	if len(problems) > 0 {
		err := errors.New(strings.Join(problems, "; "))
		fmt.Fprintf(stderr, "oacbench: %v\n", err)
		return cfg, err
	}
	return cfg, nil
}

// benchmark generates the corpus, runs the selected cases and prints the
// report.
func benchmark(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	ref, err := resolveProgram("ref", cfg.ref)
	if err != nil {
		return err
	}
	ours, err := resolveProgram("ours", cfg.ours)
	if err != nil {
		return fmt.Errorf("%w (run make build, or pass -ours)", err)
	}
	workdir, err := openWorkdir(cfg.workdir)
	if err != nil {
		return err
	}
	defer func() {
		if cfg.keep {
			fmt.Fprintf(stderr, "oacbench: kept %s\n", workdir)
		} else if rmErr := os.RemoveAll(workdir); rmErr != nil && err == nil {
			err = rmErr
		}
	}()

	c := buildCorpus(cfg.seed)
	paths, err := c.write(filepath.Join(workdir, "corpus"))
	if err != nil {
		return err
	}
	b := &bench{cfg: cfg, corpus: c, paths: paths, workdir: workdir,
		ref: ref, ours: ours, stdout: stdout, progress: stderr}
	fmt.Fprintf(stdout, "ref:  %s\nours: %s\nworkdir: %s (%s)\n", ref.path, ours.path, workdir, fsType(workdir))

	var results []caseResult
	var mismatched []string
	for _, bc := range b.cases() {
		res, err := b.runCase(ctx, bc)
		if errors.Is(err, errMismatch) {
			mismatched = append(mismatched, bc.name)
			continue
		}
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	printReport(stdout, c, results)
	printTargets(stdout, medium(workdir), results)
	if len(mismatched) > 0 {
		return fmt.Errorf("OUTPUT MISMATCH in case(s) %s", strings.Join(mismatched, ", "))
	}
	return nil
}

// resolveProgram makes the path absolute and checks it is executable, so a
// missing build fails with a clear message rather than in the first run.
func resolveProgram(label, path string) (program, error) {
	if !strings.Contains(path, "/") {
		// A bare name is looked up in PATH, like a shell would.
		found, err := exec.LookPath(path)
		if err != nil {
			return program{}, fmt.Errorf("%s program %q: %w", label, path, err)
		}
		path = found
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return program{}, err
	}
	if _, err := exec.LookPath(abs); err != nil {
		return program{}, fmt.Errorf("%s program: %w", label, err)
	}
	return program{label: label, path: abs}, nil
}

// workdirMarker tags directories this tool created. The tool only ever
// empties or removes a directory carrying it, so a mistaken -workdir (say,
// the repository root) is refused instead of deleted.
const workdirMarker = ".oacbench-workdir"

func openWorkdir(dir string) (string, error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "oacbench-")
		if err != nil {
			return "", err
		}
		dir = tmp
	} else if err := claimWorkdir(dir); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, workdirMarker), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

// claimWorkdir accepts a missing or empty directory, or one left by an
// earlier run (then cleared so stale corpus files cannot linger).
func claimWorkdir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, workdirMarker)); err != nil {
		return fmt.Errorf("refusing -workdir %s: not empty and not made by oacbench", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}
