// Command orcbench is what make bench runs for os-refresh-config: it times
// the reference and ours side by side (whole process, alternating runs,
// medians) on a base dir of 200 trivial scripts in one phase, and on the
// four phases with one script each, and prints the ratios.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// targetRatio is the target: at least 5 times less wall time.
const targetRatio = 5.0

type benchCase struct {
	name    string
	figure  string         // its target's name in the TARGET line
	scripts map[string]int // phase dir -> number of scripts
	total   int
}

var cases = []benchCase{
	{name: "200 scripts, 1 phase", figure: "200-scripts-ratio", scripts: map[string]int{"configure.d": 200}, total: 200},
	{name: "4 phases, 1 script each", figure: "4-phases-ratio", scripts: map[string]int{
		"pre-configure.d": 1, "configure.d": 1, "post-configure.d": 1, "migration.d": 1}, total: 4},
}

func main() {
	ref := flag.String("ref", "/usr/bin/os-refresh-config", "reference os-refresh-config")
	ours := flag.String("ours", "bin/os-refresh-config", "our os-refresh-config")
	runs := flag.Int("runs", 7, "timed runs per program and case")
	workdir := flag.String("workdir", "", "scratch directory (default: a new temporary directory)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *ref, *ours, *runs, *workdir); err != nil {
		fmt.Fprintln(os.Stderr, "orcbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, stdout io.Writer, ref, ours string, runs int, workdir string) error {
	if workdir == "" {
		d, err := os.MkdirTemp("", "orcbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		workdir = d
	}
	absOurs, err := filepath.Abs(ours)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\truns\tref median ms\tours median ms\tratio\tref ms/script\tours ms/script\n")
	var targets []benchkit.Target
	for i, c := range cases {
		base := filepath.Join(workdir, fmt.Sprintf("base%d", i))
		if err := makeBase(base, c); err != nil {
			return err
		}
		bins := []string{ref, absOurs}
		samples, err := benchkit.Alternate(runs, len(bins), func(r, side int) (benchkit.Sample, error) {
			s, log, err := orc(ctx, bins[side], base, filepath.Join(workdir, "lock"))
			if err != nil {
				return s, fmt.Errorf("%s: %v\n%s", bins[side], err, log)
			}
			if n := strings.Count(log, " completed\n"); r == 0 && n != c.total {
				return s, fmt.Errorf("%s ran %d of %d scripts:\n%s", bins[side], n, c.total, log)
			}
			return s, nil
		})
		if err != nil {
			return err
		}
		refS, oursS := samples[0], samples[1]
		rm, om := benchkit.Median(refS), benchkit.Median(oursS)
		ratio := benchkit.Ratio(rm, om)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1fx\t%.2f\t%.2f\n", c.name, runs, rm, om, ratio,
			rm/float64(c.total), om/float64(c.total))
		targets = append(targets, benchkit.Target{Program: "os-refresh-config", Name: c.figure,
			Value: ratio, Unit: "x", Op: ">=", Goal: targetRatio})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range targets {
		t.Print(stdout)
	}
	return nil
}

// makeBase writes trivial scripts: a shell that exits at once.
func makeBase(base string, c benchCase) error {
	for dir, n := range c.scripts {
		d := filepath.Join(base, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			p := filepath.Join(d, fmt.Sprintf("%03d-trivial", i))
			if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}

func orc(ctx context.Context, bin, base, lock string) (benchkit.Sample, string, error) {
	cmd := exec.CommandContext(ctx, bin, "--lockfile", lock)
	cmd.Env = append(os.Environ(), "OS_REFRESH_CONFIG_BASE_DIR="+base)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s, err := benchkit.Run(cmd)
	return s, out.String(), err
}
