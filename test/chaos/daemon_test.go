package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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

// noConfigDrive is a blkid that finds no device (its exit status 2).
const noConfigDrive = "#!/bin/sh\nexit 2\n"

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
	// The ec2 collector reads a config drive first, found by blkid on
	// the whole host: collectors/difftest attaches one (a loop device
	// labelled config-2) while this test may run. This host has none.
	stub := filepath.Join(dir, "stub")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stub, "blkid"), []byte(noConfigDrive), 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "os-collect-config"), "--config-file", conf)
	// No systemd, no journal; the status record in the test's directory.
	cmd.Env = []string{"PATH=" + stub + ":" + os.Getenv("PATH"), "LANG=C.UTF-8", "OS_COLLECT_CONFIG_STATUS_DIR=" + dir + "/status"}
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
