package main

// The big file's side of make bench: peak RSS of one --one-time pass of
// the local collector over a single 100 MB JSON document, ours against
// the reference, on a new cache (every file written) and on a cache that
// already holds the same data (the .last compared).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

// bigCorpus writes a document of about size bytes to path: one object per
// service, each with many options (short values, long ones such as
// certificates and scripts, non-ASCII text, numbers, booleans, nulls),
// nested maps and lists of hosts, as a large overcloud's hieradata is.
// It is written service by service, never held whole.
func bigCorpus(path string, size int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	n := writeCorpus(bw, size)
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// writeCorpus writes bigCorpus's document to out and returns its size.
func writeCorpus(out io.Writer, size int) int {
	w := &countWriter{w: out}
	io.WriteString(w, "{")
	cert := strings.Repeat("MIIDdzCCAl+gAwIBAgIEbF3h7TANBgkqhkiG9w0BAQsFADBsMRAwDgYDVQQGEwdV", 30)
	for s := 0; w.n < size; s++ {
		svc := jsondoc.NewObject(0)
		for k := 0; k < 120; k++ {
			svc.Set(fmt.Sprintf("option_%03d", k), fmt.Sprintf("value-%d-%d-%s", s, k, strings.Repeat("x", 20+k%60)))
		}
		svc.Set("certificate", fmt.Sprintf("-----BEGIN CERTIFICATE-----\n%d%s\n-----END CERTIFICATE-----\n", s, cert))
		svc.Set("motd", fmt.Sprintf("Bienvenue sur le nœud %d — ne pas éteindre ☃", s))
		svc.Set("workers", jsondoc.Int(int64(s%64+1)))
		svc.Set("ratio", jsondoc.Float(0.75))
		svc.Set("enabled", s%2 == 0)
		svc.Set("proxy", nil)
		hosts := make([]jsondoc.Value, 0, 30)
		for h := 0; h < 30; h++ {
			host := jsondoc.NewObject(3)
			host.Set("name", fmt.Sprintf("overcloud-controller-%d-%d.internalapi.example.com", s, h))
			host.Set("ip", fmt.Sprintf("172.16.%d.%d", s%250, h))
			host.Set("roles", []jsondoc.Value{"controller", "network", fmt.Sprintf("az-%d", h%3)})
			hosts = append(hosts, host)
		}
		svc.Set("hosts", hosts)
		nested := jsondoc.NewObject(0)
		for d := 0; d < 10; d++ {
			inner := jsondoc.NewObject(0)
			inner.Set("limits", []jsondoc.Value{jsondoc.Int(int64(d * 100)), jsondoc.Int(int64(d*100 + 99))})
			inner.Set("comment", strings.Repeat("tuned for the large flavour ", 4))
			nested.Set(fmt.Sprintf("pool_%d", d), inner)
		}
		svc.Set("pools", nested)
		if s > 0 {
			io.WriteString(w, ", ")
		}
		fmt.Fprintf(w, "%q: %s", fmt.Sprintf("service_%05d", s), jsondoc.Dumps(svc))
	}
	io.WriteString(w, "}\n")
	return w.n
}

type countWriter struct {
	w io.Writer
	n int
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// bigRSS runs each program --one-time on the big file twice with its own
// new cache (the first pass stores and commits everything; the second
// finds it unchanged) and prints both passes' peak RSS, and their
// targets: the larger peak at most twice the input plus 32 MiB
// (benchkit.MemTarget), and each pass's no more than the reference's.
func bigRSS(ctx context.Context, stdout io.Writer, ref, ours, agents, dir string, size int) error {
	local := filepath.Join(dir, "big-local")
	if err := os.MkdirAll(local, 0o755); err != nil {
		return err
	}
	n, err := bigCorpus(filepath.Join(local, "hieradata.json"), size)
	if err != nil {
		return err
	}
	type side struct {
		label, bin string
		extra      []string
	}
	sides := []side{{"ref", ref, nil}, {"ours", ours, nil}}
	rss := map[string][2]float64{}
	for _, p := range sides {
		cache := filepath.Join(dir, "big-"+p.label, "cache")
		os.RemoveAll(filepath.Dir(cache))
		os.MkdirAll(filepath.Dir(cache), 0o755)
		var got [2]float64
		for pass := range 2 {
			args := append([]string{"--config-file", "/dev/null", "--one-time",
				"--cachedir", cache, "--backup-cachedir", cache + ".backup", "--local-path", local,
				"-c", "true"}, p.extra...)
			cmd := exec.CommandContext(ctx, p.bin, append(args, "local")...)
			if p.label == "ours" {
				cmd.Args[0] = "os-collect-config"
			}
			cmd.Env = withStatusDir(os.Environ(), filepath.Join(dir, "big-"+p.label, "status"))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			s, err := benchkit.Run(cmd)
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", p.bin, err, out.String())
			}
			got[pass] = float64(s.MaxRSS) / 1024
		}
		rss[p.label] = got
		os.RemoveAll(filepath.Dir(cache))
	}
	inMiB := float64(n) / (1 << 20)
	fmt.Fprintf(stdout, "os-collect-config one-time pass: local collector, one file of %d bytes (%.1f MiB), peak RSS\n", n, inMiB)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pass\tref MiB\tours MiB\tours/ref\tours/input\n")
	// The figures' names, peak-rss-<N>mb-input..., are those of the other
	// programs' 100 MB inputs.
	figure := fmt.Sprintf("peak-rss-%dmb-input", (n+500_000)/1_000_000)
	targets := []benchkit.Target{benchkit.MemTarget(program, figure, max(rss["ours"][0], rss["ours"][1]), int64(n))}
	for i, label := range []string{"new cache", "unchanged"} {
		r, o := rss["ref"][i], rss["ours"][i]
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.2f\n", label, r, o, o/r, o/inMiB)
		targets = append(targets, benchkit.Target{Program: program, Name: figure + "-" + strings.ReplaceAll(label, " ", "-") + "-over-ref",
			Value: o / r, Unit: "x", Op: "<=", Goal: 1, Decimals: 2})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range targets {
		t.Print(stdout)
	}
	return bigOthers(ctx, stdout, ref, ours, agents, dir, filepath.Join(local, "hieradata.json"), n)
}
