package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/refagent"
	"github.com/tripleo-go/agent/test/fleet"
	"github.com/tripleo-go/agent/test/fleet/model"
	"github.com/tripleo-go/agent/test/fleet/stats"
)

// The timeline of a run, in polling intervals from the fleet's start:
// the start, an idle stretch, three changes, a hung outage and the
// recovery. The windows measured are these.
const (
	startEnd     = 4  // [0, 4): the start (first passes, ramps, phases)
	idleEnd      = 10 // [4, 10): idle
	changeEvery  = 3  // changes at 10, 13, 16
	changes      = 3
	outageAt     = 19 // the model hangs every request from 19 to 21
	outageEnd    = 21
	recoveryEnd  = 27 // [21, 27): after the outage
	referenceEnd = idleEnd
)

// ph is boundary k of a timeline whose idle stretch is extra intervals
// longer (the pushed fleet's, push.go); the later phases move with it.
func ph(extra, k int) float64 {
	if k >= idleEnd {
		return float64(k + extra)
	}
	return float64(k)
}

// variant is one kind of fleet.
type variant struct {
	Name string
	// Conf is added to [DEFAULT] (ours), or the whole timing (reference).
	Conf      string
	Reference bool
	// Zaqar: the zaqar collector over a websocket, against the Zaqar
	// model (push.go), instead of the request collector and a TempURL.
	Zaqar bool
	// Probes: only this many agents are daemons, the others the
	// daemon's subscription alone (listeners.go); no idle stretch and
	// no outage, the changes only.
	Probes int `json:",omitempty"`
}

type simConfig struct {
	agents, refAgents int
	interval          time.Duration
	docBytes          int
	latency           time.Duration
	stagger           time.Duration
	outage            string
	dir, out          string
	splay             float64
	short             bool
	probes            int
}

// result is one variant's figures.
type result struct {
	Variant  variant
	Agents   int
	Interval float64 // seconds
	// Bucket is the resolution of the timelines: a second at a 30 s
	// interval, scaled with it, so that "busiest second" keeps its sense.
	Bucket float64
	// per bucket from the fleet's start
	Requests, BytesOut, BytesIn []float64
	Kinds                       map[string]int64
	// Idle: per agent-hour at the interval, and the spread
	IdleRequestsPerAgentHour, IdleBytesOutPerAgentHour, IdleBytesInPerAgentHour float64
	Idle, Start, StartVsIdle, Recovery                                          stats.Spread
	// Propagation is each agent's time from a change to its command
	// with the new version, seconds, all changes together; Missed counts
	// agents that had not run it when the next phase began.
	Propagation []float64
	PerChange   []stats.Summary
	Missed      int
	// ExtraIdle is how many intervals the idle stretch was longer.
	ExtraIdle int          `json:",omitempty"`
	Memory    fleet.Memory // per agent
	// The Zaqar model's: requests by service and kind in the idle
	// window, websocket frames per bucket, and per idle agent-hour.
	IdleKinds, Services, FrameKinds map[string]int64 `json:",omitempty"`
	Frames                          []float64        `json:",omitempty"`
	IdleFramesPerAgentHour          float64          `json:",omitempty"`
	// PushDelays are every push's delay after its change, seconds, all
	// changes together.
	PushDelays []float64 `json:",omitempty"`
	// Received (the probes variant) is each subscribed socket's time
	// from a change to its push, seconds; ReceivedMissed counts the
	// sockets that had none before the next change.
	Received       []float64 `json:",omitempty"`
	ReceivedMissed int       `json:",omitempty"`
	ModelCPU       float64   // seconds, the model's process, whole run
	// Exited are the agents that stopped by themselves, with why.
	Exited    []string `json:",omitempty"`
	Logged    int
	LastLines []string
}

func simMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	var c simConfig
	fs.IntVar(&c.agents, "agents", 10000, "our agents per variant")
	fs.IntVar(&c.refAgents, "ref-agents", 20, "reference agents (0: none)")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "polling interval (the timeline scales with it)")
	fs.IntVar(&c.docBytes, "doc-bytes", 8192, "the metadata document's size")
	fs.DurationVar(&c.latency, "latency", 0, "the model's latency")
	fs.DurationVar(&c.stagger, "stagger", 0, "spread the starts over this long (0: all at once)")
	fs.StringVar(&c.outage, "outage", model.Hang, "the outage's mode: hang or 503")
	fs.Float64Var(&c.splay, "splay", 0, "also run a variant with this splay, seconds (0: none)")
	fs.StringVar(&c.dir, "dir", "/dev/shm/fleetsim", "the agents' directories (tmpfs)")
	fs.StringVar(&c.out, "out", "", "write results.json, report.md and the plots here")
	only := fs.String("variants", "", "run only these variants, comma-separated (ours, nojitter, splay, zaqar-push, zaqar-push-probes, reference)")
	fs.IntVar(&c.probes, "probes", defaultProbes, "the zaqar-push-probes variant's daemons (the other agents are subscribed sockets)")
	fs.BoolVar(&c.short, "short", false, "the .ci/run size: 200 agents, a 1 s interval (the timeline scaled to 27 s), no splay or reference variant")
	cpuProfile := fs.String("cpuprofile", "", "write the fleet process's CPU profile here (the agents' passes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := profileCPU(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.short {
		c.agents, c.refAgents, c.interval, c.splay = 200, 0, time.Second, 0
	}
	// a zaqar agent holds a socket and a keep-alive connection to Keystone
	raiseFileLimit(3*c.agents + 1024)
	want := func(key string) bool { return *only == "" || slices.Contains(strings.Split(*only, ","), key) }
	var variants []variant
	if want("ours") {
		variants = append(variants, variant{Name: "ours"})
	}
	if want("nojitter") {
		variants = append(variants, variant{Name: "ours, jitter = false", Conf: "jitter = false\n"})
	}
	if c.splay > 0 && want("splay") {
		variants = append(variants, variant{Name: fmt.Sprintf("ours, splay = %g", c.splay), Conf: fmt.Sprintf("splay = %g\n", c.splay)})
	}
	if want("zaqar-push") {
		variants = append(variants, variant{Name: "ours, zaqar push", Zaqar: true})
	}
	if !c.short && c.probes > 0 && want("zaqar-push-probes") {
		variants = append(variants, variant{Name: fmt.Sprintf("ours, zaqar push, %d daemons among the sockets", c.probes), Zaqar: true, Probes: c.probes})
	}
	if c.refAgents > 0 && want("reference") {
		if why := refagent.Available(); why != "" {
			fmt.Fprintln(os.Stderr, "fleetsim: no reference run:", why)
		} else {
			variants = append(variants, variant{Name: "reference", Reference: true})
		}
	}
	var results []result
	for _, v := range variants {
		r, err := runVariant(ctx, c, v)
		if err != nil {
			return fmt.Errorf("%s: %w", v.Name, err)
		}
		printResult(r)
		printTargets(os.Stdout, c, r)
		results = append(results, r)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if c.out == "" {
		return nil
	}
	return writeReport(c, results)
}

// raiseFileLimit makes room for every agent's connection (the model's
// ends are in its own process).
func raiseFileLimit(n int) {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < uint64(n) {
		l.Cur = max(l.Cur, uint64(n))
		l.Max = max(l.Max, l.Cur)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			fmt.Fprintf(os.Stderr, "fleetsim: cannot raise the open files limit to %d: %v\n", n, err)
		}
	}
}

// conf is agent i's configuration: the request collector (a TempURL
// node) polling the model, or the zaqar collector (zaqarConf).
func conf(c simConfig, v variant, i int, url, dir, command string) string {
	min := min(1, c.interval.Seconds()/30) // the ramp scales with the interval
	collector := "request"
	if v.Zaqar {
		collector = "zaqar"
	}
	s := fmt.Sprintf("[DEFAULT]\ncommand = %s\ncachedir = %s/cache\nbackup_cachedir = %s/backup\ncollectors = %s\n"+
		"polling_interval = %g\nmin_polling_interval = %g\n%s",
		command, dir, dir, collector, c.interval.Seconds(), min, v.Conf)
	if v.Zaqar {
		return s + zaqarConf(i, url)
	}
	return s + fmt.Sprintf("[request]\nmetadata_url = %s\n", url)
}

func runVariant(ctx context.Context, c simConfig, v variant) (result, error) {
	n := c.agents
	if v.Reference {
		n = c.refAgents
	}
	bucket := c.interval / 30
	res := result{Variant: v, Agents: n, Interval: c.interval.Seconds(), Bucket: bucket.Seconds()}
	dir := filepath.Join(c.dir, strings.NewReplacer(" ", "", ",", "-", "=", "").Replace(v.Name))
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	queues := 0
	if v.Zaqar {
		queues = n
	}
	m, err := startModel(c.docBytes, c.latency, bucket, queues)
	if err != nil {
		return res, err
	}
	defer m.stop()
	cpu0 := m.cpuSeconds()
	I := c.interval
	extra := idleExtra(c, v)
	end := ph(extra, recoveryEnd)
	daemons := n
	if v.Probes > 0 { // an idle interval, the changes, no outage
		extra, daemons = startEnd+1-idleEnd, min(v.Probes, n)
		end = ph(extra, outageAt)
	}
	res.ExtraIdle = extra
	idleAt := idleFrom(c, v)
	if v.Reference {
		end = referenceEnd // the lock-step is plain by then; Python is costly to host
	}
	at := func(k float64) time.Duration { return time.Duration(k * float64(I)) }

	var runs func() []fleet.Run
	var chs []change
	// the daemons' log and the listeners' pushes, read once they stopped
	var logged func() (int, []string)
	var pushes func() []fleet.Run
	var started time.Time
	var stop func() error
	before := fleet.MemoryNow()
	var mem fleet.Memory
	if v.Reference {
		var agents []refagent.Agent
		for i := 0; i < n; i++ {
			d := filepath.Join(dir, fmt.Sprintf("agent-%05d", i))
			os.MkdirAll(d, 0o700)
			// $$: oslo.config substitutes $name in values
			cmd := fmt.Sprintf(`grep -ho '"version": [0-9]*' $$(echo $$OS_CONFIG_FILES | tr : ' ') | head -1 | sed "s/^/$$(date +%%s.%%N) /" >> %s/runs`, d)
			p := filepath.Join(d, "os-collect-config.conf")
			if err := os.WriteFile(p, []byte(conf(c, v, i, m.URL, d, cmd)), 0o600); err != nil {
				return res, err
			}
			agents = append(agents, refagent.Agent{Dir: d, Args: []string{"--config-file", p}})
		}
		rf, err := refagent.Start(dir, agents)
		if err != nil {
			return res, err
		}
		started = time.Now()
		stop = func() error {
			err := rf.Exited()
			rf.Stop()
			return err
		}
		runs = func() []fleet.Run { return referenceRuns(dir, n) }
	} else {
		if daemons < n {
			ls, err := startListenProc(m.URL, daemons, n)
			if err != nil {
				return res, err
			}
			pushes = ls.stop
			defer ls.stop() // an early return's
		}
		f, err := fleet.Start(ctx, fleet.Options{N: daemons, Dir: dir, Stagger: c.stagger,
			Conf: func(i int, d string) string { return conf(c, v, i, m.URL, d, "os-refresh-config") }})
		if err != nil {
			return res, err
		}
		started = f.Started
		stop = f.Stop
		runs = f.Runs
		logged = f.Logged
	}
	fmt.Fprintf(os.Stderr, "fleetsim: %s: %d agents started, %s per interval, %s in all\n", v.Name, n, I, at(float64(end)))
	wait := func(k float64) error {
		select {
		case <-time.After(time.Until(started.Add(at(k)))):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var idleFrom, idleTo model.Stats // the Zaqar model's counts
	err = func() error {
		if err := wait(float64(idleAt)); err != nil {
			return err
		}
		if v.Zaqar {
			idleFrom, _ = m.Control.Stats(ctx)
		}
		if !v.Reference && daemons == n {
			mem = fleet.MemoryNow().PerAgent(before, n)
		}
		if v.Reference {
			return wait(float64(end))
		}
		for k := 0; k < changes; k++ {
			if err := wait(ph(extra, idleEnd+k*changeEvery)); err != nil {
				return err
			}
			if v.Zaqar && k == 0 {
				idleTo, _ = m.Control.Stats(ctx)
			}
			ver, t, err := m.Control.Change(ctx)
			if err != nil {
				return err
			}
			chs = append(chs, change{ver, t})
		}
		if daemons < n {
			return wait(end)
		}
		if err := wait(ph(extra, outageAt)); err != nil {
			return err
		}
		if err := m.Control.Outage(ctx, c.outage); err != nil {
			return err
		}
		if err := wait(ph(extra, outageEnd)); err != nil {
			return err
		}
		if err := m.Control.Outage(ctx, ""); err != nil {
			return err
		}
		return wait(end)
	}()
	st, serr := m.Control.Stats(context.Background())
	res.ModelCPU = m.cpuSeconds() - cpu0
	stopErr := stop()
	if logged != nil {
		res.Logged, res.LastLines = logged()
	}
	if pushes != nil {
		res.Received, res.ReceivedMissed, _ = propagation(chs, pushes(), n-daemons, at(changeEvery))
	}
	if err != nil {
		return res, err
	}
	if serr != nil {
		return res, serr
	}
	if stopErr != nil {
		// An agent that stopped by itself is a figure, not the end of the
		// run: at 10,000 agents a hung outage holds two descriptors per
		// node on each side, past this machine's limit of 20,000.
		res.Exited = strings.Split(stopErr.Error(), "\n")
	}
	res.Memory = mem
	// the model's timelines start when it did: align them on the fleet's start
	shift := int(started.Sub(st.Start) / bucket)
	res.Requests, res.BytesOut, res.BytesIn = from(st.Requests, shift), from(st.BytesOut, shift), from(st.BytesIn, shift)
	res.Kinds = st.Kinds
	win := func(s []float64, a, b float64) []float64 { return window(s, at(a), at(b), bucket) }
	idleStop := ph(extra, idleEnd)
	idle := win(res.Requests, float64(idleAt), idleStop)
	idleHours := at(idleStop-float64(idleAt)).Hours() * float64(n)
	// per agent-hour at this interval, scaled to the same number of polls
	// (a pushed fleet's idle cost is by the hour, not by the poll)
	scale := I.Seconds() / 30
	if v.Zaqar {
		scale = 1
	}
	res.IdleRequestsPerAgentHour = stats.Sum(idle) / idleHours * scale
	res.IdleBytesOutPerAgentHour = stats.Sum(win(res.BytesOut, float64(idleAt), idleStop)) / idleHours * scale
	res.IdleBytesInPerAgentHour = stats.Sum(win(res.BytesIn, float64(idleAt), idleStop)) / idleHours * scale
	if v.Zaqar {
		res.Services, res.FrameKinds, res.Frames = st.Services, st.FrameKinds, from(st.Frames, shift)
		res.IdleKinds = diffCounts(idleTo.Kinds, idleFrom.Kinds)
		res.IdleFramesPerAgentHour = stats.Sum(win(res.Frames, float64(idleAt), idleStop)) / idleHours
		for _, d := range st.PushDelays {
			res.PushDelays = append(res.PushDelays, d...)
		}
	}
	res.Idle = stats.SpreadOf(idle)
	res.Start = stats.SpreadOf(win(res.Requests, 0, idleStop))
	startPeak := stats.SpreadOf(win(res.Requests, 0, startEnd)).Busiest
	res.StartVsIdle = stats.Spread{Mean: res.Idle.Mean, Busiest: startPeak}
	if res.Idle.Mean > 0 {
		res.StartVsIdle.Ratio = startPeak / res.Idle.Mean
	}
	if !v.Reference {
		res.Recovery = stats.SpreadOf(win(res.Requests, ph(extra, outageEnd), ph(extra, recoveryEnd)))
	}
	res.Propagation, res.Missed, res.PerChange = propagation(chs, runs(), daemons, at(changeEvery))
	return res, nil
}

// change is one change of the document, posted at at.
type change struct {
	version int
	at      time.Time
}

// propagation is, for each change, each of the n agents' time to its
// first run (or push) of that version or a later one within the window
// after it, seconds; missed counts the agents that had none.
func propagation(chs []change, all []fleet.Run, n int, window time.Duration) (lat []float64, missed int, per []stats.Summary) {
	for _, ch := range chs {
		deadline := ch.at.Add(window)
		first := map[int]float64{}
		for _, r := range all {
			if r.Version >= ch.version && !r.At.Before(ch.at) && r.At.Before(deadline) {
				if d, ok := first[r.Agent]; !ok || r.At.Sub(ch.at).Seconds() < d {
					first[r.Agent] = r.At.Sub(ch.at).Seconds()
				}
			}
		}
		var one []float64
		for _, d := range first {
			one = append(one, d)
		}
		missed += n - len(one)
		lat = append(lat, one...)
		per = append(per, stats.Summarize(one))
	}
	return lat, missed, per
}

// from drops the first shift buckets (or pads, if negative).
func from(s []float64, shift int) []float64 {
	if shift >= 0 {
		if shift > len(s) {
			return nil
		}
		return s[shift:]
	}
	return append(make([]float64, -shift), s...)
}

// window is the buckets of [a, b), zeros where none.
func window(s []float64, a, b, bucket time.Duration) []float64 {
	i, j := int(a/bucket), int(b/bucket)
	out := make([]float64, max(j-i, 0))
	for k := range out {
		if i+k < len(s) {
			out[k] = s[i+k]
		}
	}
	return out
}
