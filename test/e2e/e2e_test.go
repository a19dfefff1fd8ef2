package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

var (
	skipReason string // set when the lab cannot or need not run

	oursOnce sync.Once
	oursPath string // our os-collect-config, built on first use
	oursErr  error

	countsMu sync.Mutex
	idleLog  []string // requests of one idle pass per program and transport
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	required := os.Getenv("REQUIRE_E2E") == "1"
	switch {
	case os.Getenv("E2E") == "" && !required:
		skipReason = "the e2e lab runs only when asked: E2E=1 or REQUIRE_E2E=1 (make e2e)"
	case os.Geteuid() != 0:
		skipReason = "the e2e lab needs root (it installs Debian packages and runs OpenStack services)"
	}
	if skipReason != "" {
		if required {
			fmt.Fprintln(os.Stderr, "FAIL: REQUIRE_E2E=1 but:", skipReason)
			return 1
		}
		return m.Run()
	}
	var err error
	if lab, err = NewLab(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	if err := labSecrets.AddLabPasswords(filepath.Join(lab.Scripts, "lib.sh")); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	if buildDir, err = os.MkdirTemp("", "e2e-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer os.RemoveAll(buildDir)

	ctx := context.Background()
	reuse := lab.Running(ctx)
	var stopOnce sync.Once
	stop := func(why string) {
		stopOnce.Do(func() {
			if reuse || os.Getenv("E2E_KEEP") == "1" {
				fmt.Fprintf(os.Stderr, "e2e: %s; leaving the lab running (state in %s; stop it with %s/down)\n", why, lab.Dir, lab.Scripts)
				return
			}
			t0 := time.Now()
			if err := lab.Down(context.Background(), os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "e2e: down:", err)
			}
			fmt.Fprintf(os.Stderr, "e2e: %s; lab down in %s\n", why, time.Since(t0).Round(time.Second))
		})
	}
	// Stop the lab on SIGINT/SIGTERM, and before go test's -timeout
	// panics (which skips every defer) on a hung test.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		stop("interrupted by " + s.String())
		os.Exit(1)
	}()
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, ok := f.Value.(flag.Getter).Get().(time.Duration); ok && d > 3*time.Minute {
			watchdog := time.AfterFunc(d-2*time.Minute, func() {
				stop(fmt.Sprintf("test timeout (%s) about to pass", d))
				fmt.Fprintln(os.Stderr, "FAIL: e2e tests did not finish in time")
				os.Exit(1)
			})
			defer watchdog.Stop()
		}
	}

	if reuse {
		fmt.Fprintf(os.Stderr, "e2e: reusing the running lab in %s\n", lab.Dir)
	} else {
		t0 := time.Now()
		if err := lab.Up(ctx, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: lab up:", err)
			stop("lab up failed")
			return 1
		}
		fmt.Fprintf(os.Stderr, "e2e: lab up in %s\n", time.Since(t0).Round(time.Second))
	}
	waitPrebuild := prebuild()
	code := m.Run()
	waitPrebuild()
	fmt.Fprintf(os.Stderr, "e2e: secret scan: %s\n", labSecrets.Summary())
	if len(idleLog) > 0 {
		sort.Strings(idleLog)
		fmt.Fprintf(os.Stderr, "e2e: requests of one idle pass (no change):\n  %s\n", strings.Join(idleLog, "\n  "))
	}
	stop("tests done")
	return code
}

func needLab(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// program is an os-collect-config to test. pending names the transports
// it cannot do yet (the test skips those with the reason).
type program struct {
	name    string
	path    func(t *testing.T) string
	pending map[string]string
	// onePass: a change shows at the first pass, whatever the transport.
	onePass bool
	// noIdleAuth: an idle pass makes no authentication or discovery
	// request to Keystone.
	noIdleAuth bool
}

var programs = []program{
	{name: "reference", path: referencePath},
	// Ours takes every pending zaqar snapshot and keeps the newest, so one
	// pass is always enough; and it keeps its Keystone token ([keystone]
	// cache_dir across these --one-time processes), so an idle pass asks
	// Keystone nothing.
	{name: "ours", path: ourPath, onePass: true, noIdleAuth: true},
}

func referencePath(t *testing.T) string {
	const p = "/usr/bin/os-collect-config" // python3-os-collect-config (lab/install)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the reference is missing: %v", err)
	}
	return p
}

// ourPath builds the agent once and returns its os-collect-config link:
// argv[0] picks the program.
func ourPath(t *testing.T) string {
	oursOnce.Do(func() {
		oursErr = difftest.BuildAgent(buildDir, "os-collect-config")
		oursPath = filepath.Join(buildDir, "os-collect-config")
	})
	if oursErr != nil {
		t.Fatal(oursErr)
	}
	return oursPath
}

type transport struct {
	name      string // subtest name
	transport string
	collector string // the os-collect-config collector (and cache key)
	websocket bool   // zaqar over its websocket API
	passes    int    // most --one-time passes until a change shows
	// with nothing to read, a pass waits for the next message (the
	// websocket collector blocks on recv): the idle pass gets 20 s
	blocksWhenIdle bool
}

var transports = []transport{
	{name: "cfn", transport: PollServerCFN, collector: "cfn", passes: 1},
	{name: "heat", transport: PollServerHeat, collector: "heat", passes: 1},
	{name: "temp-url", transport: PollTempURL, collector: "request", passes: 1},
	// heat posts a full metadata snapshot to the queue per change (the
	// first one, from the server's creation, without deployments), and the
	// collector pops one message per pass.
	{name: "zaqar", transport: ZaqarMessage, collector: "zaqar", passes: 6},
	{name: "zaqar-websocket", transport: ZaqarMessage, collector: "zaqar", websocket: true, passes: 6, blocksWhenIdle: true},
}

// TestCollect runs each program's os-collect-config --one-time against a
// stack per transport: the cache must hold the server's metadata (with the
// script deployment in "deployments") and the os-apply-config deployment
// exploded into a key of its own; a pass with nothing new must not run the
// command (its requests are counted); after a stack update with a new
// greeting the next pass(es) must see the change and run the command.
func TestCollect(t *testing.T) {
	needLab(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel() // so that every transport's cases run side by side, not one transport at a time
			for _, p := range programs {
				t.Run(p.name, func(t *testing.T) {
					t.Parallel()
					if why, ok := p.pending[tr.transport]; ok {
						t.Skip(why)
					}
					testCollect(t, p, tr)
				})
			}
		})
	}
}

// quiet lets an idle pass count the lab's requests alone while the
// other cases of TestCollect run side by side: what they do to the lab
// (a stack created, updated or deleted, a pass) holds it shared
// (busy), an idle pass holds it whole.
var quiet sync.RWMutex

// busy runs f as one of the cases' shared steps.
func busy(f func()) {
	quiet.RLock()
	defer quiet.RUnlock()
	f()
}

func testCollect(t *testing.T, p program, tr transport) {
	ctx := context.Background()
	occ := p.path(t)
	name := fmt.Sprintf("e2e-%s-%s", tr.name, p.name)
	t0 := time.Now()
	var st *Stack
	var err error
	busy(func() { st, err = lab.CreateStack(ctx, name, tr.transport, "NO_SIGNAL", "hello-1") })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack %s created in %s", name, time.Since(t0).Round(100*time.Millisecond))
	t.Cleanup(func() {
		if !t.Failed() {
			busy(func() { err = lab.DeleteStack(context.Background(), name) })
			if err != nil {
				t.Log(err)
			}
		}
	})
	if _, ok := st.OCC[tr.collector].(map[string]any); !ok {
		t.Fatalf("the server's os-collect-config has no %q section: %v", tr.collector, st.OCC)
	}

	dir := t.TempDir()
	if p.onePass {
		tr.passes = 1
	}
	a := agent{t: t, argv0: occ, stack: st, tr: tr, dir: dir, noIdleAuth: p.noIdleAuth}
	a.writeConf()

	busy(func() { a.passUntil("hello-1") })
	a.idlePass(p.name)

	t0 = time.Now()
	busy(func() { st, err = lab.UpdateStack(ctx, st, "hello-2") })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stack %s updated in %s", name, time.Since(t0).Round(100*time.Millisecond))
	busy(func() { a.passUntil("hello-2") })
}

// agent is one program's os-collect-config with its own cache.
type agent struct {
	t        *testing.T
	argv0    string
	stack    *Stack
	tr       transport
	dir      string
	confs    []string
	greeting string // the one in the cache
	// noIdleAuth: fail if an idle pass asks Keystone for a token.
	noIdleAuth bool
}

func (a *agent) writeConf() {
	// command: `true` that leaves a trace, to tell a pass that saw a change
	conf := fmt.Sprintf(`[DEFAULT]
command = echo run >> %s/runs
cachedir = %s/cache
backup_cachedir = %s/backup
[keystone]
cache_dir = %s/keystone
`, a.dir, a.dir, a.dir, a.dir)
	if a.tr.websocket {
		conf += "[zaqar]\nuse_websockets = true\n"
	}
	p := filepath.Join(a.dir, "agent.conf")
	if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
		a.t.Fatal(err)
	}
	a.confs = []string{a.stack.ConfPath, p}
}

// pass runs one os-collect-config --one-time.
func (a *agent) pass() { a.t.Helper(); a.passWithin(2*time.Minute, false) }

// passWithin runs one os-collect-config --one-time with a deadline, which
// may pass if mayBlock.
func (a *agent) passWithin(timeout time.Duration, mayBlock bool) {
	a.t.Helper()
	argv := []string{a.argv0}
	for _, c := range a.confs {
		argv = append(argv, "--config-file", c)
	}
	argv = append(argv, "--one-time")
	// our pass record goes to the agent's directory, not the host's /run
	env := append(os.Environ(), "OS_COLLECT_CONFIG_STATUS_DIR="+filepath.Join(a.dir, "status"))
	res, err := Run(context.Background(), timeout, Cmd{Argv: argv, Dir: a.dir, Env: env})
	a.t.Logf("%s --one-time: %s, exit %d", filepath.Base(a.argv0), res.Duration.Round(10*time.Millisecond), res.ExitCode)
	if res.TimedOut && mayBlock {
		a.t.Logf("still waiting for a message after %s, as expected: stopped", timeout)
		return
	}
	if err != nil {
		a.t.Fatalf("%v\n%s", err, tail(res.Stderr, 4000))
	}
}

func (a *agent) runs() int {
	b, err := os.ReadFile(filepath.Join(a.dir, "runs"))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "run\n")
}

// passUntil runs passes until the cache holds greeting (at most
// tr.passes); the command must have run (something changed).
func (a *agent) passUntil(greeting string) {
	a.t.Helper()
	before := a.runs()
	for i := 1; ; i++ {
		a.pass()
		err := a.cached(greeting)
		if err == nil {
			a.t.Logf("greeting %q in the cache after %d pass(es)", greeting, i)
			a.greeting = greeting
			break
		}
		if i >= a.tr.passes {
			a.t.Fatalf("after %d pass(es): %v", i, err)
		}
		time.Sleep(time.Second)
	}
	if a.runs() == before {
		a.t.Errorf("the cache changed but the command did not run")
	}
}

// idlePass runs a pass with nothing new: the command must not run and the
// cache must stay. Its requests are counted and logged. Zaqar's queue can
// still hold older snapshots (heat posts one per change): with zaqar, the
// passes that still pop one (and run the command) come first.
func (a *agent) idlePass(program string) {
	a.t.Helper()
	quiet.Lock()
	defer quiet.Unlock()
	for i := 1; ; i++ {
		before := a.runs()
		m := lab.Mark()
		if a.tr.blocksWhenIdle {
			// Waits up to 30 s for a message; 10 s of silence tell.
			a.passWithin(10*time.Second, true)
		} else {
			a.pass()
		}
		c := m.Count()
		if a.runs() == before {
			a.t.Logf("requests of an idle pass: %s", c)
			if n := c[AgentKeystone]; a.noIdleAuth && n > 0 {
				a.t.Errorf("an idle pass made %d Keystone request(s) itself: %s", n, c)
			}
			countsMu.Lock()
			idleLog = append(idleLog, fmt.Sprintf("%-16s %-9s %s", a.tr.name, program, c))
			countsMu.Unlock()
			break
		}
		if a.tr.transport != ZaqarMessage || i >= a.tr.passes {
			a.t.Fatalf("pass %d after the change ran the command again", i)
		}
		a.t.Logf("pass %d still popped a message", i)
	}
	a.check(a.greeting)
}

func (a *agent) check(greeting string) {
	a.t.Helper()
	if err := a.cached(greeting); err != nil {
		a.t.Fatal(err)
	}
}

// cached checks the cache: COLLECTOR.json is the server's metadata (its
// os-collect-config section and the script deployment with this greeting
// as input), e2e-structured.json is the exploded os-apply-config
// deployment's config {"e2e": {"greeting": greeting}}.
func (a *agent) cached(greeting string) error {
	cache := filepath.Join(a.dir, "cache")
	var md struct {
		OCC         map[string]any `json:"os-collect-config"`
		Deployments []struct {
			Name, Group string
			Inputs      []struct {
				Name  string
				Value any
			}
		}
	}
	if err := readJSON(filepath.Join(cache, a.tr.collector+".json"), &md); err != nil {
		return err
	}
	if _, ok := md.OCC[a.tr.collector]; !ok {
		return fmt.Errorf("%s.json: no os-collect-config.%s", a.tr.collector, a.tr.collector)
	}
	found := false
	for _, d := range md.Deployments {
		if d.Name != ScriptDeployment {
			continue
		}
		for _, in := range d.Inputs {
			if in.Name == "greeting" {
				if in.Value != greeting {
					return fmt.Errorf("%s.json: deployment %s has greeting %v, want %q", a.tr.collector, d.Name, in.Value, greeting)
				}
				found = true
			}
		}
	}
	if !found {
		return fmt.Errorf("%s.json: no deployment %s with input greeting", a.tr.collector, ScriptDeployment)
	}
	var exploded map[string]map[string]any
	if err := readJSON(filepath.Join(cache, StructuredDeployment+".json"), &exploded); err != nil {
		return fmt.Errorf("the os-apply-config deployment was not exploded: %w", err)
	}
	if g := exploded["e2e"]["greeting"]; g != greeting {
		return fmt.Errorf("%s.json: greeting %v, want %q", StructuredDeployment, g, greeting)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// TestIdleBaseline counts the requests the services get with no agent
// running for a few seconds: the noise under the idle-pass counts.
func TestIdleBaseline(t *testing.T) {
	needLab(t)
	m := lab.Mark()
	time.Sleep(5 * time.Second)
	c := m.Count()
	t.Logf("requests in 5 s without an agent: %s", c)
	for _, s := range []string{"keystone", "heat-api", "heat-api-cfn"} {
		if c[s] != 0 {
			t.Errorf("%d requests reached %s with no agent running", c[s], s)
		}
	}
}
