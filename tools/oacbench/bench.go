package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// errMismatch marks a case whose two programs wrote different trees.
var errMismatch = errors.New("output mismatch")

// maxDiffLines bounds the differences printed for a mismatch.
const maxDiffLines = 10

// program is one os-apply-config binary under test.
type program struct {
	label string // "ref" or "ours"; names its output dir and log
	path  string
}

// benchCase is one scenario. Only the render of meta into a dir readied by
// prepare is timed.
type benchCase struct {
	name    string
	meta    []string
	prepare func(ctx context.Context, p program, outDir string) error
	// floor, set once round 0 has verified the outputs, is timed after the
	// two programs in each round (see floor.go).
	floor floor
	// bound, set with floor, says the bound is timed after it (see
	// bound.go, steadybound.go and boundworker.go).
	bound bool
	// boundChanged is how many outputs the steady bound changes, as
	// checked once: each timed run must change as many.
	boundChanged int
}

// bench holds what every case needs.
type bench struct {
	cfg      config
	corpus   *corpus
	paths    corpusPaths
	workdir  string
	ref      program
	ours     program
	stdout   io.Writer
	progress io.Writer
	made     int // output directories made so far (newDir)
}

// cases returns the scenarios selected by -case, in a fixed order.
func (b *bench) cases() []benchCase {
	fresh := benchCase{name: "fresh", meta: b.paths.meta, prepare: b.prepareEmpty}
	steady := benchCase{name: "steady", meta: b.paths.modified, prepare: b.prepareRendered}
	switch b.cfg.which {
	case "fresh":
		return []benchCase{fresh}
	case "steady":
		return []benchCase{steady}
	}
	return []benchCase{fresh, steady}
}

// prepareEmpty leaves a fresh run's output directory empty, as newDir
// made it.
func (b *bench) prepareEmpty(context.Context, program, string) error { return nil }

// prepareRendered fills the output directory with a complete render of the
// original metadata by the same program, so the timed run measures an
// update of an existing tree after one service's values changed.
func (b *bench) prepareRendered(ctx context.Context, p program, outDir string) error {
	_, err := b.render(ctx, p, outDir, b.paths.meta, "steady-prepare")
	return err
}

// newDir makes a new empty output directory for one run, named after it.
// Nothing under it is deleted before the bench ends: on ext4 without a
// journal, the kernel skips, one by one, the inodes freed in the last
// minutes when it allocates one (see README.md), so a run that follows a
// deletion pays for it, and which side followed which deletion decided
// the fresh ratio on disk.
func (b *bench) newDir(name string) (string, error) {
	b.made++
	dir := filepath.Join(b.workdir, "out", fmt.Sprintf("%03d-%s", b.made, name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// runCase alternates ref and ours, round after round, so that slow drifts
// of the machine (thermal, page cache, other load) hit both alike. Round 0
// is checked for identical output before any timing is trusted.
func (b *bench) runCase(ctx context.Context, c benchCase) (caseResult, error) {
	res := caseResult{name: c.name}
	rounds := b.cfg.warmup + b.cfg.runs
	fmt.Fprintf(b.progress, "oacbench: case %s: %d warm-up + %d timed rounds (ref, ours alternately)\n",
		c.name, b.cfg.warmup, b.cfg.runs)
	for round := range rounds {
		sides := []struct {
			p       program
			samples *[]sample
		}{{b.ref, &res.ref}, {b.ours, &res.ours}}
		outs := map[string]string{}
		for _, side := range sides {
			out, err := b.newDir(c.name + "-" + side.p.label)
			if err != nil {
				return res, err
			}
			outs[side.p.label] = out
			if err := c.prepare(ctx, side.p, out); err != nil {
				return res, err
			}
			// Flush the previous runs' dirty pages now, so that their
			// writeback does not land inside the next timed run.
			syscall.Sync()
			s, err := b.render(ctx, side.p, out, c.meta, c.name)
			if err != nil {
				return res, err
			}
			if round >= b.cfg.warmup {
				*side.samples = append(*side.samples, s)
			}
			if b.cfg.verbose {
				fmt.Fprintf(b.progress, "oacbench: %s round %d %s: %.1f ms, %.1f MiB\n",
					c.name, round, side.p.label, float64(s.Wall)/float64(time.Millisecond), float64(s.MaxRSS)/1024)
			}
		}
		if round == 0 {
			if err := b.verify(ctx, &c, outs[b.ref.label], outs[b.ours.label]); err != nil {
				return res, err
			}
		}
		if c.floor != nil && round >= b.cfg.warmup {
			d, err := b.timeFloor(c, outs[b.ours.label])
			if err != nil {
				return res, fmt.Errorf("case %s: floor: %w", c.name, err)
			}
			res.floor = append(res.floor, sample{Wall: d})
		}
		if c.bound && round >= b.cfg.warmup {
			if err := b.timeBound(c, &res); err != nil {
				return res, fmt.Errorf("case %s: bound: %w", c.name, err)
			}
		}
	}
	return res, nil
}

// timeFloor times c's floor in a directory readied like the programs'.
// The fresh floor writes into its own empty directory; the steady floor
// reads ours' output (oursOut), which the round just brought up to date.
func (b *bench) timeFloor(c benchCase, oursOut string) (time.Duration, error) {
	dir := oursOut
	if c.name == "fresh" {
		var err error
		if dir, err = b.newDir("fresh-floor"); err != nil {
			return 0, err
		}
	}
	syscall.Sync()
	return c.floor(dir)
}

// timeBound times c's bound in a new empty directory, then its parts,
// alone, in another, each in a worker process; or, for the steady case,
// the steady bound.
func (b *bench) timeBound(c benchCase, res *caseResult) error {
	if c.name == "steady" {
		return b.timeSteadyBound(c, res)
	}
	for _, mode := range []string{"bound", "parts"} {
		dir, err := b.newDir(c.name + "-" + mode)
		if err != nil {
			return err
		}
		syscall.Sync()
		ds, err := runBoundWorker(mode, dir, b.paths.templates, c.meta)
		switch {
		case err != nil:
			return err
		case mode == "bound" && len(ds) == 1:
			res.bound = append(res.bound, sample{Wall: ds[0]})
		case mode == "parts" && len(ds) == len(partNames):
			res.parts = append(res.parts, boundParts{ds[0], ds[1], ds[2], ds[3], ds[4]})
		default:
			return fmt.Errorf("bound worker %s: %d durations", mode, len(ds))
		}
	}
	return nil
}

// checkBound runs the bound once and checks it wrote what ours wrote,
// but for the bodies: the same paths and modes. Bodies differ where Go
// and Python format values differently; their count is printed.
func (b *bench) checkBound(c *benchCase, oursTree map[string]entry) error {
	dir, err := b.newDir(c.name + "-bound-check")
	if err != nil {
		return err
	}
	if _, err := runBoundWorker("bound", dir, b.paths.templates, c.meta); err != nil {
		return fmt.Errorf("case %s: %w", c.name, err)
	}
	files, bodies, err := compareBound(dir, oursTree)
	if err != nil {
		return fmt.Errorf("case %s: the bound wrote another tree than ours: %w", c.name, err)
	}
	fmt.Fprintf(b.stdout, "%s: bound wrote the same %d files, paths and modes as ours; %d bodies differ (Go's value formatting)\n",
		c.name, files, bodies)
	return nil
}

// prepareSteadyBound makes a directory and fills it as prepareRendered
// fills the programs' output dirs, but with the fresh bound's render of
// the original metadata: the bound then compares its render with its own,
// where Go's value formatting is the same on both sides.
func (b *bench) prepareSteadyBound(name string) (string, error) {
	dir, err := b.newDir(name)
	if err != nil {
		return "", err
	}
	_, err = runBoundWorker("bound", dir, b.paths.templates, b.paths.meta)
	return dir, err
}

// runSteadyBound runs the steady bound in dir, readied by
// prepareSteadyBound, and returns its time and how many outputs it
// changed.
func (b *bench) runSteadyBound(c benchCase, dir string) (time.Duration, int, error) {
	ds, err := runBoundWorker("steady", dir, b.paths.templates, c.meta)
	if err != nil {
		return 0, 0, err
	}
	if len(ds) != 2 {
		return 0, 0, fmt.Errorf("bound worker steady: %d figures", len(ds))
	}
	return ds[0], int(ds[1]), nil
}

// timeSteadyBound times the steady bound once in a readied directory.
func (b *bench) timeSteadyBound(c benchCase, res *caseResult) error {
	dir, err := b.prepareSteadyBound(c.name + "-bound")
	if err != nil {
		return err
	}
	syscall.Sync()
	d, changed, err := b.runSteadyBound(c, dir)
	if err != nil {
		return err
	}
	if changed != c.boundChanged {
		return fmt.Errorf("the steady bound changed %d outputs, %d when checked", changed, c.boundChanged)
	}
	res.bound = append(res.bound, sample{Wall: d})
	return nil
}

// checkSteadyBound runs the steady bound once and checks it changed the
// paths ours changed (oursChanged), no more (its count of writes), and
// left the paths and modes ours left.
func (b *bench) checkSteadyBound(c *benchCase, oursTree map[string]entry, oursChanged []string) error {
	dir, err := b.prepareSteadyBound(c.name + "-bound-check")
	if err != nil {
		return fmt.Errorf("case %s: %w", c.name, err)
	}
	before, err := snapshot(dir)
	if err != nil {
		return err
	}
	_, wrote, err := b.runSteadyBound(*c, dir)
	if err != nil {
		return fmt.Errorf("case %s: %w", c.name, err)
	}
	after, err := snapshot(dir)
	if err != nil {
		return err
	}
	if err := sameChanges(before, after, oursChanged, wrote); err != nil {
		return fmt.Errorf("case %s: %w", c.name, err)
	}
	files, _, err := compareBound(dir, oursTree)
	if err != nil {
		return fmt.Errorf("case %s: the bound left another tree than ours: %w", c.name, err)
	}
	c.bound, c.boundChanged = true, wrote
	fmt.Fprintf(b.stdout, "%s: bound changed the same %d paths as ours (%d writes) and left the same %d files, paths and modes\n",
		c.name, len(oursChanged), wrote, files)
	return nil
}

// sameChanges checks that the steady bound, which made after of before
// with wrote writes, chmods or deletions, changed the paths ours changed
// and wrote no file it did not change.
func sameChanges(before, after map[string]entry, oursChanged []string, wrote int) error {
	changed := changedPaths(before, after)
	if !slices.Equal(changed, oursChanged) {
		return fmt.Errorf("the steady bound changed %q, ours %q", changed, oursChanged)
	}
	files := 0
	for _, p := range changed {
		if !before[p].mode.IsDir() && !after[p].mode.IsDir() {
			files++
		}
	}
	if wrote != files {
		return fmt.Errorf("the steady bound wrote %d files, of which %d changed", wrote, files)
	}
	return nil
}

// render runs one whole os-apply-config process and measures it. Output
// goes to a log file rather than a pipe so that no copying goroutine in
// this process competes with the child.
func (b *bench) render(ctx context.Context, p program, outDir string, meta []string, tag string) (sample, error) {
	logPath := filepath.Join(b.workdir, "logs", tag+"-"+p.label+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return sample{}, err
	}
	defer log.Close()

	args := append([]string{"-t", b.paths.templates, "-o", outDir, "-m"}, meta...)
	// --fallback-metadata with no values: the default fallback files of the
	// host must not leak into the benchmark.
	args = append(args, "--fallback-metadata")
	cmd := exec.CommandContext(ctx, p.path, args...)
	cmd.Stdout, cmd.Stderr = log, log

	s, err := benchkit.Run(cmd)
	if err != nil {
		return sample{}, fmt.Errorf("%s (%s) failed in run %s: %v\n--- last output (%s) ---\n%s",
			p.label, p.path, tag, err, logPath, tail(logPath, 2000))
	}
	return s, nil
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(data) > n {
		data = data[len(data)-n:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

// verify compares the trees both programs wrote in the same round, in
// refOut and oursOut.
func (b *bench) verify(ctx context.Context, c *benchCase, refOut, oursOut string) error {
	refTree, err := snapshot(refOut)
	if err != nil {
		return err
	}
	oursTree, err := snapshot(oursOut)
	if err != nil {
		return err
	}
	if countFiles(refTree) == 0 {
		return fmt.Errorf("case %s: the reference wrote no files; the corpus is broken", c.name)
	}
	if diffs := diffTrees(refTree, oursTree, "ref", "ours"); len(diffs) > 0 {
		b.reportMismatch(c, diffs)
		return fmt.Errorf("case %s: %w", c.name, errMismatch)
	}
	fmt.Fprintf(b.stdout, "%s: outputs identical (%d files, paths+bytes+modes)\n", c.name, countFiles(refTree))
	switch c.name {
	case "fresh":
		c.floor = freshFloor(oursTree)
		c.bound = true
		if err := b.checkBound(c, oursTree); err != nil {
			return err
		}
	case "steady":
		c.floor = steadyFloor(b.paths.templates, c.meta, oursTree)
		changed, err := b.reportSteadyChange(ctx, refTree)
		if err != nil {
			return err
		}
		return b.checkSteadyBound(c, oursTree, changed)
	}
	return nil
}

func (b *bench) reportMismatch(c *benchCase, diffs []string) {
	w := b.progress
	fmt.Fprintf(w, "\n!!!!!! WARNING: OUTPUT MISMATCH in case %s: ref and ours wrote different trees (%d differences); timings are meaningless, case skipped !!!!!!\n",
		c.name, len(diffs))
	for i, d := range diffs {
		if i == maxDiffLines {
			fmt.Fprintf(w, "  ... and %d more\n", len(diffs)-maxDiffLines)
			break
		}
		fmt.Fprintf(w, "  %s\n", d)
	}
	fmt.Fprintf(w, "  (trees are under %s; rerun with -keep to keep them)\n\n", filepath.Join(b.workdir, "out"))
}

// reportSteadyChange checks the corpus does what the steady case claims:
// the modified metadata changes only a handful of files. It renders the
// original metadata once more with the reference (untimed) and counts the
// differences to the steady output, and returns the paths that differ.
func (b *bench) reportSteadyChange(ctx context.Context, steadyTree map[string]entry) ([]string, error) {
	base, err := b.newDir("steady-baseline")
	if err != nil {
		return nil, err
	}
	if _, err := b.render(ctx, b.ref, base, b.paths.meta, "steady-baseline"); err != nil {
		return nil, err
	}
	baseTree, err := snapshot(base)
	if err != nil {
		return nil, err
	}
	changed := changedPaths(baseTree, steadyTree)
	fmt.Fprintf(b.stdout, "steady: changing service %q alters %d of %d output paths\n", b.corpus.changed, len(changed), len(baseTree))
	if len(changed) == 0 {
		return nil, fmt.Errorf("steady: the modified metadata changed no output; the corpus is broken")
	}
	return changed, nil
}
