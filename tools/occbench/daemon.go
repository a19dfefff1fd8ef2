package main

// The daemon's side of make bench: resident memory over a run of idle
// polling, and how long after a file lands in a local directory the
// command starts.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/benchkit"
)

const targetIdleRSSMiB = 12.0

// daemon is a running os-collect-config.
type daemon struct {
	label string
	cmd   *exec.Cmd
	out   bytes.Buffer
}

// startDaemon starts bin; ours keeps its pass record in statusDir, not
// the host's /run.
func startDaemon(ctx context.Context, label, bin string, ours bool, statusDir string, args ...string) (*daemon, error) {
	d := &daemon{label: label}
	d.cmd = exec.CommandContext(ctx, bin, args...)
	if ours {
		d.cmd.Args[0] = "os-collect-config"
		d.cmd.Env = withStatusDir(os.Environ(), statusDir)
	}
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", bin, err)
	}
	return d, nil
}

func (d *daemon) stop() {
	syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// rssMiB is the process's resident set now (VmRSS).
func (d *daemon) rssMiB() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("%s exited: %v\n%s", d.label, err, d.out.String())
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("%s: no VmRSS", d.label)
}

// serveDoc serves doc on 127.0.0.1 with an ETag and Last-Modified, so
// conditional GETs get 304; it returns the URL and counts requests.
func serveDoc(ctx context.Context, doc []byte, requests *atomic.Int64) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mod := time.Now().Add(-time.Hour)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "meta.json", mod, bytes.NewReader(doc))
	})}
	go srv.Serve(ln)
	go func() { <-ctx.Done(); srv.Close() }()
	return "http://" + ln.Addr().String() + "/meta.json", nil
}

// idleRSS runs both daemons side by side for d, polling every second over
// the local corpus and the request collector, and samples their RSS. An
// hour at the default 30 s interval is 120 passes: a 2-minute run makes as
// many.
func idleRSS(ctx context.Context, stdout io.Writer, ref, ours, dir string, d time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	doc, err := os.ReadFile(filepath.Join(dir, "local", "svc00.json"))
	if err != nil {
		return err
	}
	var requests atomic.Int64
	url, err := serveDoc(ctx, doc, &requests)
	if err != nil {
		return err
	}
	var ds []*daemon
	for _, p := range []struct {
		label, bin string
		ours       bool
	}{{"ref", ref, false}, {"ours", ours, true}} {
		cache := filepath.Join(dir, "idle-"+p.label)
		os.RemoveAll(cache)
		d, err := startDaemon(ctx, p.label, p.bin, p.ours, cache+".status", "--config-file", "/dev/null",
			"--cachedir", cache, "--backup-cachedir", cache+".backup", "--local-path", filepath.Join(dir, "local"),
			"--request-metadata-url", url, "--polling-interval", "1", "--min-polling-interval", "1",
			"-c", "true", "local", "request")
		if err != nil {
			return err
		}
		defer d.stop()
		ds = append(ds, d)
	}
	marks := []time.Duration{10 * time.Second}
	for k := time.Duration(1); k <= 4; k++ {
		if m := d * k / 4; m > marks[len(marks)-1] {
			marks = append(marks, m)
		}
	}
	samples := make([][]float64, len(ds))
	start := time.Now()
	for _, m := range marks {
		select {
		case <-time.After(time.Until(start.Add(m))):
		case <-ctx.Done():
			return ctx.Err()
		}
		for i, dm := range ds {
			v, err := dm.rssMiB()
			if err != nil {
				return err
			}
			samples[i] = append(samples[i], v)
		}
	}
	fmt.Fprintf(stdout, "\nos-collect-config daemon, idle: local (20 files) + request (%d KB, conditional GETs), polling every 1 s for %v (%d passes, as many as %v at the default 30 s)\n",
		len(doc)/1024, d, int(d.Seconds()), time.Duration(int(d.Seconds())*30)*time.Second)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "RSS MiB at")
	for _, m := range marks {
		fmt.Fprintf(tw, "\t%v", m)
	}
	fmt.Fprint(tw, "\tgrowth after 10s\n")
	var oursLast float64
	for i, dm := range ds {
		fmt.Fprint(tw, dm.label)
		for _, v := range samples[i] {
			fmt.Fprintf(tw, "\t%.1f", v)
		}
		last := samples[i][len(samples[i])-1]
		fmt.Fprintf(tw, "\t%+.1f\n", last-samples[i][0])
		if dm.label == "ours" {
			oursLast = last
		}
	}
	fmt.Fprintf(tw, "HTTP requests served to both: %d\n", requests.Load())
	if err := tw.Flush(); err != nil {
		return err
	}
	benchkit.Target{Program: program, Name: "daemon-idle-rss", Value: oursLast, Unit: "MiB", Op: "<=", Goal: targetIdleRSSMiB}.Print(stdout)
	return nil
}

// latency measures, for each program, the time from a new file in the
// local directory to the command's start (the command records its own
// start time), over n changes, with both polling every 10 s.
func latency(ctx context.Context, stdout io.Writer, ref, ours, dir string, n, nRef int) error {
	fmt.Fprintf(stdout, "\nos-collect-config change -> command latency: a new file in a local dir, polling interval 10 s\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "program\tchanges\tmedian ms\tmax ms\n")
	for _, p := range []struct {
		label, bin string
		ours       bool
		n          int
	}{{"ref", ref, false, nRef}, {"ours", ours, true, n}} {
		lat, err := latencyOf(ctx, dir, p.label, p.bin, p.ours, p.n)
		if err != nil {
			return err
		}
		sort.Float64s(lat)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\n", p.label, len(lat), lat[len(lat)/2], lat[len(lat)-1])
	}
	return tw.Flush()
}

func latencyOf(ctx context.Context, dir, label, bin string, ours bool, n int) ([]float64, error) {
	base := filepath.Join(dir, "latency-"+label)
	os.RemoveAll(base)
	local, marks := filepath.Join(base, "local"), filepath.Join(base, "started")
	os.MkdirAll(local, 0o755)
	os.WriteFile(filepath.Join(local, "base.json"), []byte(`{"base": 1}`), 0o644)
	d, err := startDaemon(ctx, label, bin, ours, filepath.Join(base, "status"), "--config-file", "/dev/null",
		"--cachedir", filepath.Join(base, "cache"), "--backup-cachedir", filepath.Join(base, "backup"),
		"--local-path", local, "--polling-interval", "10", "--min-polling-interval", "10",
		"-c", "date +%s.%N >> "+marks, "local")
	if err != nil {
		return nil, err
	}
	defer d.stop()
	count := func() int {
		b, _ := os.ReadFile(marks)
		return strings.Count(string(b), "\n")
	}
	waitFor := func(want int) (string, error) {
		deadline := time.Now().Add(40 * time.Second)
		for time.Now().Before(deadline) {
			if count() >= want {
				b, _ := os.ReadFile(marks)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				return lines[want-1], nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return "", fmt.Errorf("%s: the command did not run within 40 s\n%s", label, d.out.String())
	}
	if _, err := waitFor(1); err != nil { // the first pass
		return nil, err
	}
	var out []float64
	for i := 0; i < n; i++ {
		time.Sleep(time.Duration(300+137*i%700) * time.Millisecond) // land at different points of the interval
		tmp := filepath.Join(base, "new.tmp")
		os.WriteFile(tmp, []byte(fmt.Sprintf(`{"change": %d}`, i)), 0o644)
		t0 := time.Now()
		os.Rename(tmp, filepath.Join(local, "change.json"))
		line, err := waitFor(i + 2)
		if err != nil {
			return nil, err
		}
		started, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: command wrote %q", label, line)
		}
		out = append(out, (started-float64(t0.UnixNano())/1e9)*1000)
	}
	return out, nil
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
