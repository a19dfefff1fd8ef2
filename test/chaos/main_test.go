package chaos

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// agent is the multi-call binary, built once for the package's tests.
var agent = difftest.NewSharedAgent("os-collect-config", "heat-config-notify")

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	agent.Remove()
	report.print()
	os.Exit(code)
}

// minutesVar makes the run long (make torture): the daemons go through
// faults for that many minutes, and heat-config-notify's runs repeat as
// long. Unset: the quick mode of make test, about a minute in all.
const minutesVar = "CHAOS_MINUTES"

// mode is how long and how hard a run is.
type mode struct {
	long bool
	// length is how long the daemons go through faults.
	length time.Duration
	// step is how long each fault lasts; polling is the daemon's
	// polling_interval, in seconds.
	step    time.Duration
	polling int
}

// runMode is the mode of this run; chaos is skipped under -short.
func runMode(t *testing.T) mode {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos runs take a minute or more")
	}
	if minutes() == 0 {
		return mode{step: 4 * time.Second, polling: 4}
	}
	// The reference's polling_interval, and faults that outlast it.
	return mode{long: true, length: time.Duration(minutes() * float64(time.Minute)), step: 40 * time.Second, polling: 30}
}

func minutes() float64 {
	v := os.Getenv(minutesVar)
	if v == "" {
		return 0
	}
	m, err := strconv.ParseFloat(v, 64)
	if err != nil || m <= 0 {
		panic(fmt.Sprintf("%s=%q: not a number of minutes", minutesVar, v))
	}
	return m
}

// dripFor is how long a dripped answer takes: within the clients'
// attempt timeouts in the quick mode (a slow answer that must be taken),
// beyond them in the long mode (one that must be given up on).
func dripFor() time.Duration {
	if minutes() > 0 {
		return 45 * time.Second
	}
	return 3 * time.Second
}

// report gathers the figures of every run, printed at the end.
var report figures

type figures struct {
	mu   sync.Mutex
	rows []string
}

func (f *figures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, fmt.Sprintf(format, args...))
}

func (f *figures) print() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rows) == 0 {
		return
	}
	sort.Strings(f.rows)
	fmt.Println("chaos figures:")
	fmt.Println(strings.Join(f.rows, "\n"))
}

// injected formats an injector's counts.
func injected(counts map[Fault]int) string {
	var parts []string
	total := 0
	for _, f := range WireFaults {
		if n := counts[f]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
			total += n
		}
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
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
