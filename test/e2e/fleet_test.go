package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/procstat"
	"github.com/tripleo-go/agent/internal/testkit/refagent"
	"github.com/tripleo-go/agent/test/fleet"
)

// TestFleet is the real services' side of tools/fleetsim (docs/scale.md):
// a fleet of our agents (in this process: the project's daemon, each with
// its own cache on tmpfs) and one of the reference's (Debian's, a process
// each), started at once against one stack per transport, idle for a
// window: requests per service (the services' logs), bytes the agents
// sent and received (counted on their sockets) and the services' CPU
// seconds (/proc), per idle agent-hour, side by side. Figures are printed
// (FLEET lines), not asserted: they depend on the machine.
//
// The short mode (.ci/run) is temp-url, 50 and 5 agents, a 5 s
// interval and a 30 s window; FLEET_LONG=1 (make fleet) is every
// transport, FLEET_AGENTS (200) and FLEET_REF_AGENTS (20) agents, the
// default 30 s interval, a FLEET_WINDOW-second window (300) and a 190 KB
// document. FLEET_TRANSPORTS (some of temp-url,heat,zaqar) picks the
// transports of either; FLEET_OUT=DIR also writes the table there.
func TestFleet(t *testing.T) {
	needLab(t)
	cfg := fleetConfig{ours: 50, ref: 5, interval: 5 * time.Second, window: 30 * time.Second, transports: []string{"temp-url"}}
	if os.Getenv("FLEET_LONG") == "1" {
		cfg = fleetConfig{ours: envInt("FLEET_AGENTS", 200), ref: envInt("FLEET_REF_AGENTS", 20), interval: 30 * time.Second,
			window: time.Duration(envInt("FLEET_WINDOW", 300)) * time.Second, transports: []string{"temp-url", "heat", "zaqar"}, docBytes: 190_000}
	}
	if tr := os.Getenv("FLEET_TRANSPORTS"); tr != "" {
		cfg.transports = strings.Split(tr, ",")
	}
	if why := refagent.Available(); why != "" {
		t.Fatal(why)
	}
	wire := fleet.CountWire()
	var rows []fleetRow
	for _, name := range cfg.transports {
		var tr transport
		for _, x := range transports {
			if x.name == name {
				tr = x
			}
		}
		t.Run(name, func(t *testing.T) {
			st := fleetStack(t, tr, cfg.docBytes)
			for _, reference := range []bool{false, true} {
				r := runFleet(t, cfg, tr, st, reference, wire)
				t.Logf("FLEET %s", r)
				rows = append(rows, r)
			}
		})
	}
	table := fleetTable(rows)
	t.Logf("FLEET per idle agent-hour at a %s interval:\n%s", cfg.interval, table)
	if out := os.Getenv("FLEET_OUT"); out != "" {
		os.MkdirAll(out, 0o755)
		if err := os.WriteFile(filepath.Join(out, "real-services.md"), []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

type fleetConfig struct {
	ours, ref        int
	interval, window time.Duration
	transports       []string
	docBytes         int
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// fleetStack makes the transport's stack; with docBytes, the greeting
// (an input of both deployments) pads the server's metadata to about
// that size.
func fleetStack(t *testing.T, tr transport, docBytes int) *Stack {
	t.Helper()
	greeting := "fleet"
	if docBytes > 0 {
		greeting = strings.Repeat("f", docBytes/2)
	}
	name := "e2e-fleet-" + tr.name
	st, err := lab.CreateStack(context.Background(), name, tr.transport, "NO_SIGNAL", greeting)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.DeleteStack(context.Background(), name); err != nil {
			t.Log(err)
		}
	})
	return st
}

// fleetRow is one fleet's figures per idle agent-hour.
type fleetRow struct {
	transport, program string
	agents             int
	requests           Counts
	sent, received     map[string]float64 // bytes by service
	cpu                map[string]float64 // seconds by service
	agentHours         float64
}

// The lab's ports, by service (lab/lib.sh).
var fleetPorts = map[string]string{"17000": "keystone", "17004": "heat-api", "17008": "heat-api-cfn", "17080": "swift", "17088": "zaqar"}

// The lab's processes, by service (lab/pids/NAME.pid).
var fleetServices = map[string][]string{
	"keystone": {"keystone"}, "heat-api": {"heat-api"}, "heat-engine": {"heat-engine"}, "heat-api-cfn": {"heat-api-cfn"},
	"swift": {"swift-proxy", "swift-object", "swift-container", "swift-account"},
	"zaqar": {"zaqar", "zaqar-websocket"}, "rabbitmq": {"rabbitmq"}, "mariadb": {"mariadb"},
}

func serviceCPU() map[string]float64 {
	all := procstat.All()
	out := map[string]float64{}
	for svc, names := range fleetServices {
		var pids []int
		for _, n := range names {
			if b, err := os.ReadFile(filepath.Join(lab.Dir, "pids", n+".pid")); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		out[svc] = procstat.TreeCPU(all, pids...)
	}
	return out
}

func byService(ports map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for p, v := range ports {
		if s, ok := fleetPorts[p]; ok {
			out[s] += v
		} else {
			out["other"] += v
		}
	}
	return out
}

func diff(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		out[k] = v - a[k]
	}
	return out
}

// runFleet starts a fleet at once, lets it settle (the ramp and its
// phases: four intervals), and measures it over the window.
func runFleet(t *testing.T, cfg fleetConfig, tr transport, st *Stack, reference bool, wire *fleet.Wire) fleetRow {
	t.Helper()
	n, program := cfg.ours, "ours"
	if reference {
		n, program = cfg.ref, "reference"
	}
	dir, err := os.MkdirTemp("/dev/shm", "fleet-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// Not collectors: the stack's file names them, and collectors is a
	// multi-valued option (oslo's MultiStrOpt): named in both files, each
	// would be collected twice per pass, by either agent.
	own := func(d string) string {
		return fmt.Sprintf("[DEFAULT]\ncommand = true\ncachedir = %s/cache\nbackup_cachedir = %s/backup\npolling_interval = %d\n[keystone]\ncache_dir = %s/keystone\n",
			d, d, int(cfg.interval.Seconds()), d)
	}
	var mark func() (sent, received map[string]float64)
	var stop func()
	if reference {
		var agents []refagent.Agent
		for i := 0; i < n; i++ {
			d := filepath.Join(dir, fmt.Sprintf("agent-%05d", i))
			os.MkdirAll(d, 0o700)
			p := filepath.Join(d, "os-collect-config.conf")
			if err := os.WriteFile(p, []byte(own(d)), 0o600); err != nil {
				t.Fatal(err)
			}
			// the stack's file, then the agent's, as TestCollect runs it
			agents = append(agents, refagent.Agent{Dir: d, Args: []string{"--config-file", st.ConfPath, "--config-file", p}})
		}
		rf, err := refagent.Start(dir, agents)
		if err != nil {
			t.Fatal(err)
		}
		stop = rf.Stop
		marks := 0
		mark = func() (map[string]float64, map[string]float64) {
			rf.Mark()
			marks++
			time.Sleep(time.Second)
			sent, received := map[string]float64{}, map[string]float64{}
			for _, a := range agents {
				lines, _ := refagent.ReadCounts(a.Dir)
				if len(lines) >= marks {
					for p, v := range lines[marks-1].Sent {
						sent[p] += v
					}
					for p, v := range lines[marks-1].Received {
						received[p] += v
					}
				}
			}
			return sent, received
		}
	} else {
		f, err := fleet.Start(context.Background(), fleet.Options{N: n, Dir: dir, ConfigFiles: []string{st.ConfPath},
			Conf: func(i int, d string) string { return own(d) }})
		if err != nil {
			t.Fatal(err)
		}
		stop = func() {
			if err := f.Stop(); err != nil {
				t.Error(err)
			}
			if lines, last := f.Logged(); lines > 0 {
				t.Logf("ours logged %d lines; last: %s", lines, strings.Join(last, " | "))
			}
		}
		mark = wire.Counts
	}
	var once sync.Once
	defer once.Do(stop)
	time.Sleep(4 * cfg.interval)
	m := lab.Mark()
	cpu0 := serviceCPU()
	sent0, recv0 := mark()
	t0 := time.Now()
	time.Sleep(cfg.window)
	sent1, recv1 := mark()
	cpu1 := serviceCPU()
	hours := time.Since(t0).Hours() * float64(n)
	once.Do(stop) // the logs' counts settle once the agents are gone
	counts := m.Count()
	return fleetRow{transport: tr.name, program: program, agents: n, requests: counts,
		sent: byService(diff(sent0, sent1)), received: byService(diff(recv0, recv1)), cpu: diff(cpu0, cpu1),
		agentHours: hours * 30 / cfg.interval.Seconds()} // as many polls as at a 30 s interval
}

func (r fleetRow) String() string {
	return fmt.Sprintf("%s %s agents=%d agent-hours(30s)=%.2f requests: %s | sent %v | received %v | cpu %v",
		r.transport, r.program, r.agents, r.agentHours, r.requests, r.sent, r.received, r.cpu)
}

// fleetTable is the rows per idle agent-hour, one line per transport and
// program: requests per service, bytes to and from the agents, CPU.
func fleetTable(rows []fleetRow) string {
	var b strings.Builder
	services := []string{"keystone", "heat-api", "swift", "swift-internal", "zaqar"}
	b.WriteString("| transport | agent | agents | " + strings.Join(services, " req | ") + " req | all requests | agent's own Keystone req | bytes sent | bytes received | service CPU s (top) |\n")
	b.WriteString("|---|---|---|" + strings.Repeat("---|", len(services)) + "---|---|---|---|---|\n")
	for _, r := range rows {
		h := r.agentHours
		fmt.Fprintf(&b, "| %s | %s | %d |", r.transport, r.program, r.agents)
		all := 0
		for _, s := range []string{"keystone", "heat-api", "heat-api-cfn", "swift", "swift-internal", "zaqar"} {
			all += r.requests[s]
		}
		for _, s := range services {
			fmt.Fprintf(&b, " %.0f |", float64(r.requests[s])/h)
		}
		var sent, recv float64
		for _, v := range r.sent {
			sent += v
		}
		for _, v := range r.received {
			recv += v
		}
		var cpus []string
		var cpuAll float64
		keys := make([]string, 0, len(r.cpu))
		for k := range r.cpu {
			keys = append(keys, k)
			cpuAll += r.cpu[k]
		}
		sort.Slice(keys, func(i, j int) bool { return r.cpu[keys[i]] > r.cpu[keys[j]] })
		for _, k := range keys[:min(3, len(keys))] {
			cpus = append(cpus, fmt.Sprintf("%s %.1f", k, r.cpu[k]/h))
		}
		fmt.Fprintf(&b, " %.0f | %.0f | %.1f KB | %.1f KB | %.1f (%s) |\n", float64(all)/h, float64(r.requests[AgentKeystone])/h,
			sent/h/1e3, recv/h/1e3, cpuAll/h, strings.Join(cpus, ", "))
	}
	return b.String()
}
