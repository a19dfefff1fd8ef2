package chaos

import (
	"bytes"
	"context"
	"fmt"
	"github.com/tripleo-go/agent/internal/deadline"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/signal/notify"
)

// childVar runs TestInProcessChild: set by TestGoroutinesInProcess for a
// test binary of its own, whose goroutines are the programs' alone.
const childVar = "CHAOS_IN_PROCESS_CHILD"

// TestGoroutinesInProcess runs os-collect-config's daemon (occ.Run) and
// heat-config-notify (notify.Run) inside a test process of their own
// (this binary again, TestInProcessChild), through the faults, and
// counts goroutines: the daemon's do not grow from pass to pass, and
// once the programs have returned and the servers closed their
// connections, none of theirs is left.
func TestGoroutinesInProcess(t *testing.T) {
	runMode(t)
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInProcessChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childVar+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	_, figures, ok := strings.Cut(string(out), "chaos figures:\n")
	if !ok {
		t.Fatalf("no figures from the child:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSpace(figures), "\n") {
		if strings.HasPrefix(l, "in-process") {
			report.add("%s", l)
		}
	}
}

// TestInProcessChild is TestGoroutinesInProcess's child.
func TestInProcessChild(t *testing.T) {
	if os.Getenv(childVar) == "" {
		t.Skip("run by TestGoroutinesInProcess")
	}
	m := runMode(t)
	before := runtime.NumGoroutine()
	// One after the other: the daemon's counts at its sleeps are its own.
	var daemon, notify verdict
	notifyGoroutines(&notify)
	daemonGoroutines(&daemon, m)
	after := settle(before)
	report.add("in-process goroutines: %d before both programs, %d after they returned", before, after)
	t.Run("daemon", daemon.report)
	t.Run("notify", notify.report)
	if after > before {
		t.Errorf("%d goroutines before, %d after:\n%s", before, after, goroutineDump())
	}
}

// settle waits, a few seconds at most, for the goroutine count to come
// down to want (goroutines that end once their connection is closed take
// a moment), and returns it.
func settle(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// goroutineDump is the stacks of every goroutine, for a leak's report.
func goroutineDump() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// daemonGoroutines runs the daemon with the request, heat and
// websocket zaqar collectors at once, through every fault, counting
// goroutines at each of its sleeps.
func daemonGoroutines(t *verdict, m mode) {
	stands := []*stand{requestStand(), heatStand(), zaqarStand(true)}
	for _, s := range stands {
		defer s.close()
		s.publish(1)
	}
	dir, err := os.MkdirTemp("", "chaos-occ-")
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "record.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(recordScript, dir)), 0o755); err != nil {
		t.Errorf("%v", err)
		return
	}
	conf := fmt.Sprintf("[DEFAULT]\ncommand = %s\ncachedir = %s/cache\nbackup_cachedir = %s/backup\ncollectors = request\ncollectors = heat\ncollectors = zaqar\n"+
		"min_polling_interval = 1\npolling_interval = 2\n", script, dir, dir)
	for _, s := range stands {
		conf += s.options
	}
	if err := os.WriteFile(filepath.Join(dir, "occ.conf"), []byte(conf), 0o600); err != nil {
		t.Errorf("%v", err)
		return
	}

	var mu sync.Mutex
	var atSleep []int // the goroutines at each sleep
	var stderr bytes.Buffer
	env := occ.Env{Stdout: &stderr, Stderr: &stderr, After: func(d time.Duration) <-chan time.Time {
		mu.Lock()
		atSleep = append(atSleep, runtime.NumGoroutine())
		mu.Unlock()
		return time.After(d)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- occ.Run(ctx, []string{"--config-file", filepath.Join(dir, "occ.conf")}, env) }()

	version := 1
	publish := func() {
		version++
		for _, s := range stands {
			s.publish(version)
		}
	}
	if _, ok := waitRun(dir, "heat", 1, 60*time.Second); !ok {
		cancel()
		<-done
		t.Errorf("no first pass; log:\n%s", stderr.String())
		return
	}
	mu.Lock()
	first := len(atSleep)
	mu.Unlock()
	step := 2 * time.Second
	if m.long {
		step = 10 * time.Second
	}
	for _, f := range WireFaults {
		for _, s := range stands {
			s.in.Set(f)
		}
		publish()
		time.Sleep(step)
	}
	for _, s := range stands {
		s.in.Set(None)
		if s.ks != nil {
			s.ks.RevokeAll()
		}
	}
	publish()
	if _, ok := waitRun(dir, "heat", version, 90*time.Second); !ok {
		t.Errorf("version %d never reached the command", version)
	}
	time.Sleep(3 * time.Second) // a few quiet passes
	cancel()
	if err := <-done; err != nil && !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("Run: %v", err)
	}
	for _, s := range stands {
		s.srv.CloseClientConnections()
	}
	mu.Lock()
	sleeping := atSleep[max(first-1, 0):]
	mu.Unlock()
	quiet := sleeping[len(sleeping)-1]
	faults := map[Fault]int{}
	for _, s := range stands {
		for f, n := range s.in.Injected() {
			faults[f] += n
		}
	}
	report.add("in-process daemon (request, heat, zaqar-ws): faults injected %s; goroutines %d at its first sleep, %d at its last (quiet) one, at most %d while sleeping",
		injected(faults), sleeping[0], quiet, maxOf(sleeping))
	// Idle connections to the three servers come and go; a leak grows
	// with every pass.
	if quiet > sleeping[0]+6 {
		t.Errorf("goroutines while sleeping grew from %d to %d", sleeping[0], quiet)
	}
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// notifyGoroutines runs heat-config-notify for each transport under
// each fault, on the first two requests, four at a time.
func notifyGoroutines(t *verdict) {
	type run struct {
		tr transport
		f  Fault
	}
	work := make(chan run)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for r := range work {
				notifyOnce(t, r.tr, r.f)
			}
		})
	}
	runs := 0
	for _, tr := range []transport{cfnSignal, tempURLSignal, heatSignal, zaqarSignal} {
		for _, f := range WireFaults {
			work <- run{tr, f}
			runs++
		}
	}
	close(work)
	wg.Wait()
	report.add("in-process notify: %d runs (4 transports x %d faults on the first two requests)", runs, len(WireFaults))
}

func notifyOnce(t *verdict, tr transport, f Fault) {
	s := newSignalStand()
	defer s.close()
	defer s.srv.CloseClientConnections()
	s.in.SetN(f, 2)
	dir, err := os.MkdirTemp("", "chaos-notify-")
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "d.json")
	doc := `{"id": "chaos-deployment", "group": "script", "config": "true", "inputs": [` + s.inputs(tr) + `]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Errorf("%v", err)
		return
	}
	var stderr bytes.Buffer
	// The fault strikes Keystone's request and the signal's: two
	// latencies of up to 2 s each must fit in the budget, which no
	// attempt outlives; in the long mode a dripping answer takes 22.5 s,
	// and the budget is the one the separate processes get there.
	budget := "5"
	if minutes() > 0 {
		budget = "30"
	}
	err = notify.Run(context.Background(), []string{path}, notify.Env{Stdin: strings.NewReader(signalData), Stderr: &stderr,
		Environ: []string{deadline.NotifyRetryVar + "=" + budget}})
	if err != nil {
		t.Errorf("%s under %s: %v\n%s", tr, f, err, stderr.String())
	}
}
