// Command occbench is what make bench runs for os-collect-config: a
// one-time cycle with the local collector over about 230 KB of metadata
// and --force (so the command always runs), timed for the reference and
// ours side by side (whole process, alternating runs, medians), with peak
// RSS; then the daemon: its RSS over idle polling and its change->command
// latency; last, the peak RSS of one pass over a single 100 MB file
// (big.go).
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
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// The targets.
const (
	program      = "os-collect-config" // in the TARGET lines
	targetRatio  = 30.0
	targetRSSMiB = 15.0
)

func main() {
	ref := flag.String("ref", "/usr/bin/os-collect-config", "reference os-collect-config")
	ours := flag.String("ours", "bin/os-collect-config", "our os-collect-config")
	runs := flag.Int("runs", 7, "timed runs per program")
	workdir := flag.String("workdir", ".bench/occ", "scratch directory (emptied); not /tmp, which is slow on some VMs")
	idle := flag.Duration("idle", 2*time.Minute, "how long the daemons poll idle for the RSS figures (0: skip)")
	changes := flag.Int("latency", 10, "changes timed for our change->command latency (0: skip); the reference gets 3")
	big := flag.Int("big", 100_000_000, "bytes of the one big local file whose pass's peak RSS is measured (0: skip)")
	bigOnly := flag.Bool("big-only", false, "measure the big file only")
	agents := flag.String("heat-agents", "", "a checkout of openstack/heat-agents: the reference side of 55-heat-config and heat-config-notify on the big input (optional)")
	bigFile := flag.String("write-big", "", "only write the big file (-big bytes) there, to profile by hand")
	flag.Parse()
	if *bigFile != "" {
		if _, err := bigCorpus(*bigFile, *big); err != nil {
			fmt.Fprintln(os.Stderr, "occbench:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if !*bigOnly {
		err = run(context.Background(), os.Stdout, *ref, *ours, *runs, *workdir, *idle, *changes)
	}
	if err == nil && *big > 0 {
		err = runBig(context.Background(), os.Stdout, *ref, *ours, *agents, *workdir, *big)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "occbench:", err)
		os.Exit(1)
	}
}

// corpus writes 20 service documents of about 11.5 KB each.
func corpus(dir string) (int, error) {
	total := 0
	for s := 0; s < 20; s++ {
		doc := jsondoc.NewObject(0)
		svc := jsondoc.NewObject(0)
		for k := 0; k < 150; k++ {
			svc.Set(fmt.Sprintf("option_%03d", k), fmt.Sprintf("value-%d-%d-%s", s, k, strings.Repeat("x", 40)))
		}
		hosts := []jsondoc.Value{}
		for h := 0; h < 20; h++ {
			hosts = append(hosts, fmt.Sprintf("192.0.2.%d", h))
		}
		svc.Set("hosts", hosts)
		doc.Set(fmt.Sprintf("service_%02d", s), svc)
		data := []byte(jsondoc.DumpsIndent(doc, 1))
		total += len(data)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("svc%02d.json", s)), data, 0o644); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// runBig measures the big file in a scratch directory of its own.
func runBig(ctx context.Context, stdout io.Writer, ref, ours, agents, workdir string, size int) error {
	dir := filepath.Join(workdir, "big")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	absOurs, _ := filepath.Abs(ours)
	return bigRSS(ctx, stdout, ref, absOurs, agents, dir, size)
}

// withStatusDir is env with our programs' pass record in dir, not the
// host's /run.
func withStatusDir(env []string, dir string) []string {
	return append(env, agentstate.DirVar+"="+dir)
}

func run(ctx context.Context, stdout io.Writer, ref, ours string, runs int, dir string, idle time.Duration, changes int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "local"), 0o755)
	size, err := corpus(filepath.Join(dir, "local"))
	if err != nil {
		return err
	}
	absOurs, _ := filepath.Abs(ours)
	sides := []struct{ label, bin string }{{"ref", ref}, {"ours", absOurs}}
	samples, err := benchkit.Alternate(runs, len(sides), func(_, side int) (benchkit.Sample, error) {
		p := sides[side]
		cache := filepath.Join(dir, p.label, "cache")
		cmd := exec.CommandContext(ctx, p.bin, "--config-file", "/dev/null", "--one-time", "--force",
			"--cachedir", cache, "--backup-cachedir", cache+".backup", "--local-path", filepath.Join(dir, "local"),
			"-c", "true", "local")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if p.bin == absOurs {
			cmd.Args[0] = "os-collect-config"
			cmd.Env = withStatusDir(os.Environ(), filepath.Join(dir, p.label, "status"))
		}
		os.MkdirAll(filepath.Dir(cache), 0o755)
		s, err := benchkit.Run(cmd)
		if err != nil {
			return s, fmt.Errorf("%s: %v\n%s", p.bin, err, out.String())
		}
		return s, nil
	})
	if err != nil {
		return err
	}
	refS, oursS := samples[0], samples[1]
	rm, om := benchkit.Median(refS), benchkit.Median(oursS)
	ratio := benchkit.Ratio(rm, om)
	fmt.Fprintf(stdout, "os-collect-config one-time cycle: local collector, %d files, %d bytes, --force, command true\n", 20, size)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "runs\tref median ms\tours median ms\tratio\tref peak RSS MiB\tours peak RSS MiB\n")
	fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1fx\t%.1f\t%.1f\n", runs, rm, om, ratio,
		benchkit.PeakRSSMiB(refS), benchkit.PeakRSSMiB(oursS))
	if err := tw.Flush(); err != nil {
		return err
	}
	benchkit.Target{Program: program, Name: "one-time-ratio", Value: ratio, Unit: "x", Op: ">=", Goal: targetRatio}.Print(stdout)
	benchkit.Target{Program: program, Name: "one-time-peak-rss", Value: benchkit.PeakRSSMiB(oursS), Unit: "MiB",
		Op: "<=", Goal: targetRSSMiB}.Print(stdout)
	if idle > 0 {
		if err := idleRSS(ctx, stdout, ref, absOurs, dir, idle); err != nil {
			return err
		}
	}
	if changes > 0 {
		return latency(ctx, stdout, ref, absOurs, dir, changes, 3)
	}
	return nil
}
