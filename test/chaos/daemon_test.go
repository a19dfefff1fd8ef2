package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDaemonUnderChaos runs the os-collect-config daemon, the built
// binary, against each HTTP collector's service behind the Injector,
// through every fault in turn (and, with Keystone, tokens revoked and
// expired early), publishing a new metadata version as each fault
// starts, and then a last version as the faults end. Throughout:
//   - every run of the command saw a whole published version, newer
//     than the one before (never garbage, never the same again), and the
//     cache file always holds one;
//   - memory stays bounded, and descriptors come back to where they
//     were;
//   - the log shows the backoff: after a pass with a source unavailable,
//     the sleep before the next one, growing to polling_interval;
//   - the last version reaches the command within a polling interval
//     or so of the faults' end (measured, loosely bounded).
func TestDaemonUnderChaos(t *testing.T) {
	m := runMode(t)
	bin := agent.Dir(t)
	t.Parallel()
	stands := []*stand{requestStand(), ec2Stand(), cfnStand(), heatStand(), zaqarStand(false), zaqarStand(true)}
	// All at once, in goroutines of their own: t.Parallel would run only
	// GOMAXPROCS of them at a time, and they mostly wait.
	verdicts := make([]*verdict, len(stands))
	var wg sync.WaitGroup
	for i, s := range stands {
		t.Cleanup(s.close)
		v, dir := &verdict{}, t.TempDir()
		verdicts[i] = v
		wg.Go(func() { runDaemon(v, m, bin, dir, s) })
	}
	wg.Wait()
	for i, s := range stands {
		t.Run(s.name, verdicts[i].report)
	}
}

// verdict gathers a run's failures and notes, from any goroutine, for
// its subtest to report.
type verdict struct {
	mu         sync.Mutex
	errs, logs []string
}

func (v *verdict) Errorf(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.errs = append(v.errs, fmt.Sprintf(format, args...))
}

func (v *verdict) Logf(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.logs = append(v.logs, fmt.Sprintf(format, args...))
}

func (v *verdict) report(t *testing.T) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, l := range v.logs {
		t.Log(l)
	}
	for _, e := range v.errs {
		t.Error(e)
	}
}

func runDaemon(v *verdict, m mode, bin, dir string, s *stand) {
	version := 1
	s.publish(version)
	published := map[int]bool{1: true}
	var pmu sync.Mutex
	next := func() {
		pmu.Lock()
		defer pmu.Unlock()
		version++
		published[version] = true
		s.publish(version)
	}
	isPublished := func(v int) bool {
		pmu.Lock()
		defer pmu.Unlock()
		return published[v]
	}
	steps := schedule(m, s, next)
	if s.once {
		s.in.Set(steps[0].Fault) // from its very first request
	}
	d, err := startDaemon(bin, dir, s, m)
	if err != nil {
		v.Errorf("%v", err)
		return
	}
	defer d.kill()
	watch := watchCache(filepath.Join(dir, "cache", s.key+".json"), s, isPublished)

	// A first good pass, before any fault, for the baseline; ec2 reads
	// its source only until it succeeds, so it meets the faults first.
	start := time.Now()
	if !s.once {
		if _, ok := waitRun(dir, s.key, 1, 60*time.Second); !ok {
			d.stop(v)
			watch.stop()
			v.Errorf("no first pass within 60 s; log:\n%s", d.log.text())
			return
		}
	}
	time.Sleep(time.Second)
	base, err := ReadFigures(d.cmd.Process.Pid)
	if err != nil {
		v.Errorf("reading the daemon's figures: %v", err)
	}

	played, _ := Play(context.Background(), s.in, steps)
	faultsEnd := time.Now()
	pmu.Lock()
	final := version + 1
	pmu.Unlock()
	next() // the faults are over: the last version must come through
	seen, ok := waitRun(dir, s.key, final, time.Duration(2*m.polling)*time.Second+90*time.Second)
	recovery := seen.Sub(faultsEnd)
	// The end figures, once the daemon sleeps again.
	time.Sleep(1500 * time.Millisecond)
	end, err := ReadFigures(d.cmd.Process.Pid)
	if err != nil {
		v.Errorf("reading the daemon's figures: %v", err)
	}
	d.stop(v)
	samples := d.sampler.Stop()
	for _, bad := range watch.stop() {
		v.Errorf("%s", bad)
	}
	if !ok {
		v.Errorf("version %d never reached the command; log:\n%s", final, d.log.text())
		return
	}

	runs := listRuns(dir, s.key)
	checkRuns(v, s, runs, final, isPublished)
	rss, peak := MaxRSS(samples)
	sleeps := checkLog(v, d.log, s, m)
	checkTokenSteps(v, d.log, played)
	v.Logf("played %s", describe(played))
	report.add("daemon %-10s faults injected %s; events %s; command runs %d; RSS max %s (kernel peak %s); fds %d -> %d; threads %d -> %d; "+
		"unavailable passes %d, visible sleeps %v; recovery %.1f s after the faults ended (polling_interval %d s); ran %s",
		s.name, injected(s.in.Injected()), events(played), len(runs), MiB(rss), MiB(peak), base.FDs, end.FDs, base.Threads, end.Threads,
		d.log.count("Source ["+s.collector+"] Unavailable."), sleeps, recovery.Seconds(), m.polling, time.Since(start).Round(time.Second))
	// Bounded: the body cap (max_metadata_bytes, 64 MiB) read once, not
	// a gigabyte.
	if peak > 256<<20 {
		v.Errorf("peak RSS %s: memory not bounded", MiB(peak))
	}
	// Idle keep-alive connections come and go; a leak grows with every
	// pass.
	if end.FDs > base.FDs+4 {
		v.Errorf("descriptors %d at the start, %d at the end: a leak", base.FDs, end.FDs)
	}
	if limit := time.Duration(2*m.polling)*time.Second + 60*time.Second; recovery > limit {
		v.Errorf("recovery took %v (polling_interval %d s)", recovery, m.polling)
	}
}

// schedule is the faults a stand meets, a new version published as each
// starts; with Keystone, tokens revoked and expired early between them.
// The long mode repeats them in random orders.
func schedule(m mode, s *stand, next func()) []Step {
	faults := WireFaults
	switch {
	case s.once:
		// ec2 stops asking once it has an answer: only the faults that
		// must keep it from taking one.
		faults = []Fault{Reset, Storm, LostAnswer, Truncated, Huge, ErrorPage}
	case s.websocket:
		// Headers mean nothing to a websocket's frames.
		faults = []Fault{Latency, Reset, Storm, LostAnswer, Truncated, Huge, Drip, ErrorPage}
	}
	round := func() []Step {
		var steps []Step
		for _, f := range faults {
			steps = append(steps, Step{Fault: f, For: m.step, Event: "new version", Do: next})
		}
		if s.ks != nil {
			steps = append(steps,
				Step{For: m.step, Event: "tokens revoked", Do: func() { s.ks.RevokeAll(); next() }},
				Step{For: m.step, Event: "tokens expired early", Do: func() { s.ks.ExpireAll(); next() }})
		}
		return steps
	}
	steps := round()
	if !m.long {
		return steps
	}
	// Whole rounds in random orders, then what fits of one more: every
	// fault at least once, and about m.length in all.
	var all []Step
	for first := true; first || time.Duration(len(all))*m.step < m.length; first = false {
		rand.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		for _, st := range steps {
			if !first && time.Duration(len(all))*m.step >= m.length {
				break
			}
			all = append(all, st)
		}
		steps = round()
	}
	return all
}

func describe(played []Played) string {
	var parts []string
	for _, p := range played {
		name := string(p.Fault)
		if p.Fault == None {
			name = p.Event
		}
		parts = append(parts, fmt.Sprintf("%s %.0fs/%d", name, p.End.Sub(p.Start).Seconds(), p.Hits))
	}
	return strings.Join(parts, ", ")
}

func events(played []Played) string {
	n := map[string]int{}
	for _, p := range played {
		if p.Fault == None && p.Event != "" {
			n[p.Event]++
		}
	}
	if len(n) == 0 {
		return "none"
	}
	var parts []string
	for e, c := range n {
		parts = append(parts, fmt.Sprintf("%s %d", e, c))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// daemon is os-collect-config running as a process.
type daemon struct {
	cmd     *exec.Cmd
	log     *logTap
	sampler *Sampler
	done    chan error
	stopped bool
	exit    error
}

// recordScript is the command: it copies the files of OS_CONFIG_FILES
// into a directory of its own per run, named after the time it started.
const recordScript = `#!/bin/sh
d=%s/runs/$(date +%%s.%%N)
mkdir -p "$d"
IFS=:
for f in $OS_CONFIG_FILES; do cp "$f" "$d/"; done
`

func startDaemon(bin, dir string, s *stand, m mode) (*daemon, error) {
	script := filepath.Join(dir, "record.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(recordScript, dir)), 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "os-collect-config.conf")
	text := fmt.Sprintf("[DEFAULT]\ncommand = %s\ncachedir = %s/cache\nbackup_cachedir = %s/backup\ncollectors = %s\n"+
		"min_polling_interval = 1\npolling_interval = %d\n%s", script, dir, dir, s.collector, m.polling, s.options)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "os-collect-config"), "--config-file", conf)
	// No systemd, no journal; the status record in the test's directory.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "OS_COLLECT_CONFIG_STATUS_DIR=" + dir + "/status"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	d := &daemon{cmd: cmd, log: tap(stderr, logFile), sampler: Watch(cmd.Process.Pid, 250*time.Millisecond), done: make(chan error, 1)}
	go func() {
		<-d.log.done // Wait closes the pipe: read it all first
		d.done <- cmd.Wait()
		logFile.Close()
	}()
	return d, nil
}

// stop stops the daemon as systemd does: SIGTERM, then SIGKILL.
func (d *daemon) stop(v *verdict) {
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.exit = err
		d.stopped = true
	case <-time.After(20 * time.Second):
		v.Errorf("the daemon did not stop within 20 s of SIGTERM")
		d.kill()
	}
}

// kill ends the daemon for good, if it still runs.
func (d *daemon) kill() {
	if d.stopped {
		return
	}
	d.cmd.Process.Kill()
	d.exit = <-d.done
	d.stopped = true
}

// logTap keeps a process's log lines with the time each arrived.
type logTap struct {
	mu    sync.Mutex
	lines []logLine
	done  chan struct{}
}

type logLine struct {
	at   time.Time
	text string
}

func tap(r io.Reader, copyTo io.Writer) *logTap {
	l := &logTap{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(copyTo, sc.Text())
			l.mu.Lock()
			l.lines = append(l.lines, logLine{time.Now(), sc.Text()})
			l.mu.Unlock()
		}
		io.Copy(io.Discard, r)
	}()
	return l
}

func (l *logTap) all() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logLine(nil), l.lines...)
}

func (l *logTap) text() string {
	var b strings.Builder
	for _, ln := range l.all() {
		b.WriteString(ln.text + "\n")
	}
	return b.String()
}

func (l *logTap) count(s string) int {
	n := 0
	for _, ln := range l.all() {
		if strings.Contains(ln.text, s) {
			n++
		}
	}
	return n
}

var sleepLine = regexp.MustCompile(`^Sleeping ([0-9.]+) seconds\.$`)

// checkLog checks what an operator sees at the default level: the
// source's unavailability, each time followed by the backoff (the sleep
// before the next pass: the doubling ramp up to polling_interval, each
// sleep jittered to no more than its length, so the sleeps stay within
// the interval and grow to at least half of it); no secret. It returns
// the distinct sleeps seen.
func checkLog(t *verdict, l *logTap, s *stand, m mode) []float64 {
	text := l.text()
	for _, secret := range []string{password, secretKey, "temp_url_sig=0123abcd"} {
		if strings.Contains(text, secret) {
			t.Errorf("a secret in the log: %q", secret)
		}
	}
	unavailable := "Source [" + s.collector + "] Unavailable."
	if !strings.Contains(text, unavailable) {
		t.Errorf("the faults never made the source unavailable; log:\n%s", text)
	}
	seen := map[float64]bool{}
	waiting := false // an unavailability not yet followed by a sleep
	for _, ln := range l.all() {
		if sm := sleepLine.FindStringSubmatch(ln.text); sm != nil {
			f, _ := strconv.ParseFloat(sm[1], 64)
			seen[f] = true
			waiting = false
			if f <= 0 || f > float64(m.polling)+0.005 {
				t.Errorf("slept %v s, beyond polling_interval %d s", f, m.polling)
			}
		}
		if ln.text == unavailable {
			if waiting {
				t.Errorf("a pass with the source unavailable showed no sleep after it, at %s", ln.at.Format(time.StampMilli))
			}
			waiting = true
		}
	}
	var sleeps []float64
	for f := range seen {
		sleeps = append(sleeps, f)
	}
	sort.Float64s(sleeps)
	if len(sleeps) == 0 || sleeps[len(sleeps)-1] < float64(m.polling)/2 {
		t.Errorf("no visible backoff up to polling_interval %d s after the source failed: sleeps logged %v", m.polling, sleeps)
	}
	return sleeps
}

// run is one run of the command: when it started, and the version of
// the metadata it saw.
type run struct {
	at      time.Time
	version int
	doc     any
}

// waitRun waits until a run of the command saw version v; it returns
// when that run started.
func waitRun(dir, key string, v int, limit time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, r := range listRuns(dir, key) {
			if r.version == v {
				return r.at, true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, false
}

func listRuns(dir, key string) []run {
	ents, _ := os.ReadDir(filepath.Join(dir, "runs"))
	var runs []run
	for _, e := range ents {
		secs, err := strconv.ParseFloat(e.Name(), 64)
		if err != nil {
			continue
		}
		r := run{at: time.Unix(0, int64(secs*1e9)), version: -1}
		data, err := os.ReadFile(filepath.Join(dir, "runs", e.Name(), key+".json"))
		if err == nil && json.Unmarshal(data, &r.doc) == nil {
			r.version = versionOf(r.doc)
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.Before(runs[j].at) })
	return runs
}

// versionOf is a document's chaos_version (a string in ec2's tree), -1
// if it has none.
func versionOf(doc any) int {
	m, ok := doc.(map[string]any)
	if !ok {
		return -1
	}
	switch v := m["chaos_version"].(type) {
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return -1
}

// whole tells whether doc is exactly version v as published.
func whole(s *stand, doc any, v int) bool {
	text := document(v)
	if s.once {
		text = ec2JSON(v)
	}
	var want any
	json.Unmarshal([]byte(text), &want)
	return reflect.DeepEqual(doc, want)
}

// checkRuns: every run saw a whole published version, newer than the
// last one's; the last saw final.
func checkRuns(t *verdict, s *stand, runs []run, final int, published func(int) bool) {
	last := 0
	for i, r := range runs {
		switch {
		case r.version < 0 || !published(r.version) || !whole(s, r.doc, r.version):
			t.Errorf("run %d at %s saw garbage: %v", i, r.at.Format(time.StampMilli), r.doc)
		case r.version <= last:
			t.Errorf("run %d at %s saw version %d after %d: run again without a change, or went back", i, r.at.Format(time.StampMilli), r.version, last)
		}
		last = max(last, r.version)
	}
	if len(runs) == 0 || runs[len(runs)-1].version != final {
		t.Errorf("the last run did not see version %d", final)
	}
}

// cacheWatch reads the cache file throughout the run: it must always
// hold a whole published version, never go back to an older one.
type cacheWatch struct {
	stopc chan struct{}
	done  chan struct{}
	bad   []string
}

func watchCache(path string, s *stand, published func(int) bool) *cacheWatch {
	w := &cacheWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		last := 0
		for {
			select {
			case <-w.stopc:
				return
			case <-time.After(200 * time.Millisecond):
			}
			data, err := os.ReadFile(path)
			if err != nil {
				continue // not there yet
			}
			var doc any
			v := -1
			if json.Unmarshal(data, &doc) == nil {
				v = versionOf(doc)
			}
			switch {
			case v < 0 || !published(v) || !whole(s, doc, v):
				w.bad = append(w.bad, fmt.Sprintf("the cache held garbage at %s: %.200s", time.Now().Format(time.StampMilli), data))
			case v < last:
				w.bad = append(w.bad, fmt.Sprintf("the cache went back from version %d to %d", last, v))
			}
			last = max(last, v)
		}
	}()
	return w
}

func (w *cacheWatch) stop() []string {
	close(w.stopc)
	<-w.done
	return w.bad
}

// checkTokenSteps: a token revoked or expired early is replaced at
// once, the source never unavailable for it.
func checkTokenSteps(t *verdict, l *logTap, played []Played) {
	for _, p := range played {
		if p.Fault != None {
			continue
		}
		// A pass that began in the fault before may end in this step.
		from := p.Start.Add(dripFor() + 2*time.Second)
		for _, ln := range l.all() {
			if ln.at.After(from) && ln.at.Before(p.End) && strings.Contains(ln.text, "Unavailable.") {
				t.Errorf("%s: the source was unavailable at %s", p.Event, ln.at.Format(time.StampMilli))
			}
		}
	}
}
