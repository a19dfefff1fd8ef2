package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/tripleo-go/agent/internal/deadline"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

// transport is one of heat-config-notify's ways out.
type transport string

const (
	cfnSignal     transport = "CFN_SIGNAL"
	tempURLSignal transport = "TEMP_URL_SIGNAL"
	heatSignal    transport = "HEAT_SIGNAL"
	zaqarSignal   transport = "ZAQAR_SIGNAL"
)

// signalData is the hook's result on heat-config-notify's stdin, and
// wantBody what must arrive, as Python's json.dumps writes it.
const (
	signalData = `{"deploy_stdout":"chaos \u00e9t\u00e9 ok","deploy_stderr":"","deploy_status_code":0}`
	wantBody   = `{"deploy_stdout": "chaos \u00e9t\u00e9 ok", "deploy_stderr": "", "deploy_status_code": 0}`
)

// signalStand is everything a signal may go to, on one server behind an
// Injector: Keystone, Heat's resource signal, Zaqar, and the pre-signed
// URLs of heat-api-cfn and Swift. It records every signal that arrived.
type signalStand struct {
	srv   *httptest.Server
	in    *Injector
	ks    *keystonetest.Server
	cloud *zaqartest.Cloud

	mu  sync.Mutex
	got [][]byte // the bodies of Heat's, CFN's and Swift's signals
}

const (
	cfnPath     = "/cfn/v1/signal/arn%3Aopenstack%3Aheat%3A%3Apid%3Astacks%2Fovercloud%2F0123-abcd%2Fresources%2FChaosDeployment"
	swiftPath   = "/swift/v1/AUTH_pid/ooo-signals/chaos-deployment"
	heatSigPath = "/heat/v1/pid/stacks/overcloud/0123-abcd/resources/ChaosDeployment/signal"
)

func newSignalStand() *signalStand {
	s := &signalStand{cloud: zaqartest.New("signal-queue", password)}
	s.ks = s.cloud.KS
	// A dripping answer takes half the retry budget (3 s, 30 s in the
	// long mode): no attempt outlives the budget, so one that dripped
	// for all of it (or, in the long mode, past it) would be cut short.
	s.in = &Injector{Next: http.HandlerFunc(s.serve), MaxLatency: 2 * time.Second, DripFor: dripFor() / 2}
	s.srv = httptest.NewServer(s.in)
	s.ks.BaseURL = s.srv.URL
	s.ks.SetCatalog(map[string]string{"orchestration": s.srv.URL + "/heat/v1/pid", "messaging": s.srv.URL + "/zaqar"})
	return s
}

func (s *signalStand) close() {
	s.srv.Close()
	s.cloud.Close()
}

func (s *signalStand) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/identity"), strings.HasPrefix(r.URL.Path, "/zaqar/"):
		s.cloud.ServeHTTP(w, r)
	case r.URL.EscapedPath() == heatSigPath && r.Method == http.MethodPost:
		if !s.ks.Valid(r.Header.Get("X-Auth-Token")) {
			http.Error(w, `{"error": {"code": 401, "message": "The request you have made requires authentication."}}`, http.StatusUnauthorized)
			return
		}
		s.record(w, r, http.StatusOK)
	case r.URL.EscapedPath() == cfnPath && r.Method == http.MethodPost && r.URL.Query().Get("Signature") != "":
		s.record(w, r, http.StatusOK)
	case r.URL.Path == swiftPath && r.Method == http.MethodPut && r.URL.Query().Get("temp_url_sig") != "":
		s.record(w, r, http.StatusCreated)
	default:
		http.Error(w, "no such signal "+r.Method+" "+r.URL.EscapedPath(), http.StatusNotFound)
	}
}

func (s *signalStand) record(w http.ResponseWriter, r *http.Request, status int) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "broken request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.got = append(s.got, body)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"result": "signalled"}`)
}

// signals are the bodies that reached the service of tr.
func (s *signalStand) signals(tr transport) [][]byte {
	if tr == zaqarSignal {
		var out [][]byte
		for _, p := range s.cloud.Posted() {
			out = append(out, p.Body)
		}
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.got...)
}

// inputs are a deployment's signal inputs for tr.
func (s *signalStand) inputs(tr transport) string {
	creds := `{"name": "deploy_auth_url", "value": "` + s.srv.URL + `/identity/v3"}, {"name": "deploy_user_id", "value": "uid"},
		{"name": "deploy_password", "value": "` + password + `"}, {"name": "deploy_project_id", "value": "pid"}`
	switch tr {
	case cfnSignal:
		return `{"name": "deploy_signal_id", "value": "` + s.srv.URL + cfnPath +
			`?Timestamp=2026-11-25T09%3A00%3A00Z&SignatureMethod=HmacSHA256&AWSAccessKeyId=AKIDCHAOS&SignatureVersion=2&Signature=c2ln%2Bsecret%3D"}`
	case tempURLSignal:
		return `{"name": "deploy_signal_id", "value": "` + s.srv.URL + swiftPath + `?temp_url_sig=0123abcd&temp_url_expires=2000000000"},
			{"name": "deploy_signal_verb", "value": "PUT"}`
	case heatSignal:
		return creds + `, {"name": "deploy_stack_id", "value": "overcloud/0123-abcd"}, {"name": "deploy_resource_name", "value": "ChaosDeployment"}`
	}
	return creds + `, {"name": "deploy_queue_id", "value": "signal-queue"}`
}

// signalCase is one run of heat-config-notify under a fault.
type signalCase struct {
	tr    transport
	fault Fault
	// keystone: the fault strikes Keystone's answers, not the signal's.
	keystone bool
	// lasting: the fault lasts the whole run, else it strikes the first
	// n requests only.
	lasting bool
	n       int
}

func (c signalCase) String() string {
	target, length := "signal", fmt.Sprintf("first-%d", c.n)
	if c.keystone {
		target = "keystone"
	}
	if c.lasting {
		length = "lasting"
	}
	return fmt.Sprintf("%s/%s/%s/%s", c.tr, target, c.fault, length)
}

// outcome is what a run must end in: signalled (exit 0) or failed
// (exit 1, one ERROR line); the signals that must have arrived, exactly
// (-1: at least one, when answers were lost and the client could not
// know its request had been carried out).
func (c signalCase) outcome() (ok bool, signals int) {
	fails := c.fault == Reset || c.fault == Storm || c.fault == LostAnswer
	if c.keystone && c.lasting {
		// Keystone's token cannot be read: nothing is sent.
		fails = fails || c.fault == Truncated || c.fault == Huge || c.fault == ErrorPage
		if fails {
			return false, 0
		}
		return true, 1
	}
	switch {
	case c.keystone:
		return true, 1
	case !c.lasting && c.fault == LostAnswer:
		return true, c.n + 1 // n signals carried out, their answers lost, then one answered
	case c.lasting && c.fault == LostAnswer:
		return false, -1
	case c.lasting && fails:
		return false, 0
	}
	return true, 1
}

// TestNotifyUnderChaos runs heat-config-notify, the built binary, for
// each transport under each fault, striking the signal's request or
// Keystone's, the first two times (1 to 5 in the long mode's later
// rounds) or throughout: the deployment's result arrives exactly once,
// byte for byte, and the run exits 0; or, when the fault outlasts the
// retry budget, nothing arrives and the run exits 1 with one ERROR line
// naming the transport. A lost answer is the exception: the client
// cannot know the signal arrived, so it arrives again (Heat takes the
// first and ignores the others). Memory stays bounded.
func TestNotifyUnderChaos(t *testing.T) {
	m := runMode(t)
	bin := agent.Dir(t)
	t.Parallel()
	var cases []signalCase
	for _, tr := range []transport{cfnSignal, tempURLSignal, heatSignal, zaqarSignal} {
		for _, keystone := range []bool{false, true} {
			if keystone && (tr == cfnSignal || tr == tempURLSignal) {
				continue // pre-signed: no Keystone
			}
			for _, f := range WireFaults {
				cases = append(cases, signalCase{tr: tr, fault: f, keystone: keystone, n: 2})
				// Lasting faults that the first attempt gets through are
				// the quick mode's first-2; the long mode runs them all.
				lastingFails := f == Reset || f == Storm || f == LostAnswer || keystone && (f == Truncated || f == Huge || f == ErrorPage)
				if m.long || lastingFails {
					cases = append(cases, signalCase{tr: tr, fault: f, keystone: keystone, lasting: true})
				}
			}
		}
	}
	budget := "3"
	if m.long {
		budget = "30"
	}
	rounds := 1
	if m.long {
		rounds = max(1, int(m.length/(4*time.Minute)))
	}
	type result struct {
		c   signalCase
		v   verdict
		rss int64
		dur time.Duration
	}
	var results []*result
	for round := range rounds {
		for _, c := range cases {
			if round > 0 && !c.lasting {
				c.n = 1 + rand.IntN(5) // the long mode's later rounds: 1 to 5
			}
			results = append(results, &result{c: c})
		}
	}
	// A few at a time, in goroutines of their own (t.Parallel would run
	// GOMAXPROCS of them): most of a run is waiting.
	work := make(chan *result)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for r := range work {
				r.rss, r.dur = runNotify(&r.v, bin, r.c, budget)
			}
		})
	}
	for _, r := range results {
		work <- r
	}
	close(work)
	wg.Wait()

	byTransport := map[transport][]*result{}
	for _, r := range results {
		t.Run(r.c.String(), r.v.report)
		byTransport[r.c.tr] = append(byTransport[r.c.tr], r)
	}
	for tr, rs := range byTransport {
		counts := map[Fault]int{}
		var rss int64
		var longest time.Duration
		okRuns, failRuns := 0, 0
		for _, r := range rs {
			counts[r.c.fault]++
			rss, longest = max(rss, r.rss), max(longest, r.dur)
			if want, _ := r.c.outcome(); want {
				okRuns++
			} else {
				failRuns++
			}
		}
		report.add("notify %-15s runs %d (%d signalled, %d failing as they must, budget %s s); faults %s; RSS max %s; longest run %.1f s",
			tr, len(rs), okRuns, failRuns, budget, runsPerFault(counts), MiB(rss), longest.Seconds())
	}
}

func runsPerFault(counts map[Fault]int) string {
	var parts []string
	for _, f := range WireFaults {
		parts = append(parts, fmt.Sprintf("%s %d", f, counts[f]))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// runNotify runs heat-config-notify once for c and checks the outcome;
// it returns the run's peak RSS and length.
func runNotify(v *verdict, bin string, c signalCase, budget string) (int64, time.Duration) {
	s := newSignalStand()
	defer s.close()
	s.in.Only = func(r *http.Request) bool {
		return strings.HasPrefix(r.URL.Path, "/identity") == c.keystone
	}
	n := -1
	if !c.lasting {
		n = c.n
	}
	s.in.SetN(c.fault, n)
	dir, err := os.MkdirTemp("", "chaos-notify-")
	if err != nil {
		v.Errorf("%v", err)
		return 0, 0
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "chaos-deployment.json")
	doc := `{"id": "chaos-deployment", "name": "ChaosDeployment", "group": "script", "config": "true", "inputs": [` + s.inputs(c.tr) + `]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		v.Errorf("%v", err)
		return 0, 0
	}
	cmd := exec.Command(filepath.Join(bin, "heat-config-notify"), path)
	// No token cache: each run meets Keystone's faults, and nothing is
	// written under the host's /var/cache.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), deadline.NotifyRetryVar + "=" + budget, "HEAT_CONFIG_NOTIFY_TOKEN_CACHE=off"}
	cmd.Stdin = strings.NewReader(signalData)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	var rss int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss << 10
		}
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		v.Errorf("%v", err)
		return rss, took
	}
	wantOK, wantSignals := c.outcome()
	got := s.signals(c.tr)
	var errLines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "[ERROR]") {
			errLines = append(errLines, l)
		}
	}
	switch {
	case wantOK && (code != 0 || len(errLines) > 0):
		v.Errorf("exit %d, want 0; log:\n%s", code, stderr.String())
	case !wantOK && code != 1:
		v.Errorf("exit %d, want 1; log:\n%s", code, stderr.String())
	case !wantOK && (len(errLines) != 1 || !strings.Contains(errLines[0], "Signal failed: "+string(c.tr)+": ")):
		v.Errorf("want one ERROR line naming %s, got %q", c.tr, errLines)
	}
	switch {
	case wantSignals >= 0 && len(got) != wantSignals:
		v.Errorf("%d signals arrived, want %d; log:\n%s", len(got), wantSignals, stderr.String())
	case wantSignals < 0 && len(got) == 0:
		v.Errorf("no signal arrived; log:\n%s", stderr.String())
	}
	for _, b := range got {
		if string(b) != wantBody {
			v.Errorf("a signal arrived with %q, want %q", b, wantBody)
		}
	}
	for _, secret := range []string{password, "c2ln%2Bsecret", "c2ln+secret", "0123abcd", "tok-"} {
		if strings.Contains(stderr.String(), secret) {
			v.Errorf("a secret in the log: %q", secret)
		}
	}
	if rss > 256<<20 {
		v.Errorf("peak RSS %s", MiB(rss))
	}
	v.Logf("exit %d in %.1f s, %d signals, peak RSS %s, %d requests faulted", code, took.Seconds(), len(got), MiB(rss), s.in.Injected()[c.fault])
	return rss, took
}
