package occ

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/logging"
)

// Deliberate fix: a source that is unavailable while another changes keeps
// its last good keys, in their place, in OS_CONFIG_FILES (the reference
// dropped them, and os-apply-config rendered without that data).
func TestUnavailableSourceKeepsItsData(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"a": 1}`)}, {Name: "a-deploy", Content: doc(`{"d": 1}`)}}}
	b := &fake{entries: []collectors.Entry{{Name: "b", Content: doc(`{"b": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"heat": a, "local": b}, "heat", "local")
	if st, _, err := r.pass(context.Background()); err != nil || st != 0 {
		t.Fatal(st, err)
	}
	a.err, a.entries = collectors.ErrNotAvailable, nil
	b.entries = []collectors.Entry{{Name: "b", Content: doc(`{"b": 2}`)}}
	if st, _, err := r.pass(context.Background()); err != nil || st != 0 {
		t.Fatal(st, err)
	}
	c := dir + "/cache/"
	want := c + "a.json:" + c + "a-deploy.json:" + c + "b.json"
	got := calls(t, dir)
	if len(got) != 2 || got[1] != want {
		t.Fatalf("OS_CONFIG_FILES of the second pass %q, want %q", got, want)
	}
	list, _ := os.ReadFile(c + "os_config_files.json")
	if !strings.Contains(string(list), "a-deploy.json") {
		t.Fatalf("os_config_files.json lost the unavailable source: %s", list)
	}
}

// Deliberate fix: a pass waits while another os-collect-config holds the
// cache directory, so a manual --one-time never interleaves with the daemon.
func TestPassWaitsForTheCacheLock(t *testing.T) {
	b := &fake{entries: []collectors.Entry{{Name: "b", Content: doc(`{"b": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"local": b}, "local")
	os.Mkdir(dir+"/cache", 0o700)
	holder, err := os.Open(dir + "/cache")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := r.pass(context.Background()); done <- err }()
	time.Sleep(400 * time.Millisecond)
	if _, err := os.Stat(dir + "/calls"); err == nil {
		t.Fatal("the command ran while another process held the lock")
	}
	holder.Close() // releases the lock
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pass never took the lock")
	}
	if got := calls(t, dir); len(got) != 1 {
		t.Fatalf("calls %q", got)
	}
}

// Under journald every pass tells which collector's key changed and how,
// and how the command ended (duration and exit status), as fields.
func TestPassEvents(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"a": 1}`)}}}
	b := &fake{entries: []collectors.Entry{{Name: "b", Content: doc(`{"b": 1}`)}}}
	r, _ := fakeRunner(t, map[string]*fake{"heat_local": a, "local": b}, "heat_local", "local")
	h := &records{}
	r.log = slog.New(h)
	first := r.cfg.Command
	r.pass(context.Background())
	b.entries = []collectors.Entry{{Name: "b", Content: doc(`{"b": 2}`)}}
	r.cfg.Command = "exit 3"
	r.pass(context.Background())
	want := []string{
		"Metadata key a changed (new). collector=heat_local key=a change=new",
		"Metadata key b changed (new). collector=local key=b change=new",
		"Command exited with status 0. command=" + first + " command_exit=0",
		"Metadata key b changed (modified). collector=local key=b change=modified",
		"Command exited with status 3. command=exit 3 command_exit=3",
	}
	if got := h.events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Every command has a deadline (command-timeout): past it the command's
// process group gets SIGTERM, then SIGKILL, the pass fails with 124 and
// nothing is committed, so the next pass runs it again.
func TestCommandDeadline(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"a": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"local": a}, "local")
	r.cfg.Command = `echo started >> ` + dir + `/calls; trap "" TERM; sleep 30`
	r.cfg.CommandTimeout = 0.3
	r.killGrace = 200 * time.Millisecond
	h := &records{}
	r.log = slog.New(h)
	start := time.Now()
	st, _, err := r.pass(context.Background())
	if err != nil || st != 124 {
		t.Fatalf("status %d, %v; want 124", st, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the pass took %v: the command was not killed", took)
	}
	if r.cache.Committed("a") {
		t.Fatal("a timed-out command committed the key")
	}
	var msgs []string
	for _, rec := range h.got {
		msgs = append(msgs, rec.Message)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "did not finish within 300ms (command-timeout)") {
		t.Fatalf("no line names the deadline:\n%s", strings.Join(msgs, "\n"))
	}
}

// An unavailable source's cause is logged once, then the verdict, as the
// reference logs them (the collectors no longer log it themselves).
func TestUnavailableCauseLoggedOnce(t *testing.T) {
	a := &fake{err: collectors.Unavailable(errors.New("503 Service Unavailable for url: http://md/"))}
	r, _ := fakeRunner(t, map[string]*fake{"request": a}, "request")
	var stderr strings.Builder
	r.log = logging.New(&stderr, logging.Options{Level: slog.LevelWarn, QuietAttrs: true, Prefix: func(time.Time, slog.Level) string { return "" }})
	r.pass(context.Background())
	if want := "503 Service Unavailable for url: http://md/\nSource [request] Unavailable.\n"; stderr.String() != want {
		t.Fatalf("stderr %q, want %q", stderr.String(), want)
	}
}

// A request cut short because the daemon is stopping says nothing at
// WARNING: the source did not fail.
func TestStopIsNoUnavailableSource(t *testing.T) {
	a := &fake{err: collectors.Unavailable(errors.New("GET http://md/: context canceled"))}
	r, _ := fakeRunner(t, map[string]*fake{"request": a}, "request")
	var stderr strings.Builder
	r.log = logging.New(&stderr, logging.Options{Level: slog.LevelWarn, QuietAttrs: true, Prefix: func(time.Time, slog.Level) string { return "" }})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.pass(ctx)
	if stderr.Len() != 0 {
		t.Fatalf("a stop logged %q", stderr.String())
	}
}

// brokenConfig is a collector whose configuration cannot work until the
// test mends it.
type brokenConfig struct {
	fakeConfig
	broken *bool
}

func (c brokenConfig) New(s collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	if *c.broken {
		return nil, errors.New("[cfn] ca_certificate: reading CA file: no such file")
	}
	return c.fakeConfig.New(s, log)
}

// A collector whose configuration cannot work (an unreadable CA file) is
// unavailable, saying why, and built again on the next pass: mending the
// file needs no restart.
func TestCollectorThatCannotBeBuilt(t *testing.T) {
	f := &fake{entries: []collectors.Entry{{Name: "cfn", Content: doc(`{"c": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{}, "cfn")
	broken := true
	r.cfg.Sources["cfn"] = brokenConfig{fakeConfig{f}, &broken}
	h := &records{}
	r.log = slog.New(h)
	if _, _, err := r.pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); !strings.Contains(got, "ca_certificate: reading CA file: no such file\nSource [cfn] Unavailable.") {
		t.Fatalf("log:\n%s", got)
	}
	broken = false
	if st, _, err := r.pass(context.Background()); err != nil || st != 0 {
		t.Fatal(st, err)
	}
	if got := calls(t, dir); len(got) != 1 || !strings.HasSuffix(got[0], "/cache/cfn.json") {
		t.Fatalf("command runs %q", got)
	}
}

// Each pass leaves its record for `tripleo-agent status`: every
// collector's result and whether its keys changed, the command's exit;
// a pass with nothing new has no command and still converged.
func TestPassRecord(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	b := &fake{err: collectors.Unavailable(errors.New("503 Service Unavailable"))}
	r, dir := fakeRunner(t, map[string]*fake{"local": a, "request": b}, "local", "request")
	r.env.StatusDir = filepath.Join(dir, "run")
	read := func() agentstate.Pass {
		t.Helper()
		var p agentstate.Pass
		if err := agentstate.Read(filepath.Join(dir, "run", agentstate.PassFile), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r.pass(context.Background())
	p := read()
	if len(p.Collectors) != 2 || p.Collectors[0] != (agentstate.Collector{Name: "local", Result: "ok", Changed: true, Polled: p.Collectors[0].Polled}) ||
		p.Collectors[1].Result != "unavailable" || !strings.Contains(p.Collectors[1].Reason, "503") ||
		p.Command == nil || p.Command.Exit != 0 || !p.Converged || p.Version != agentstate.SchemaVersion {
		t.Fatalf("record %+v", p)
	}
	r.pass(context.Background())
	if p := read(); p.Command != nil || !p.Converged || p.Collectors[0].Changed {
		t.Fatalf("a pass with nothing new: %+v", p)
	}
}

// A pass killed between a cache write and its rename leaves the staged
// file (hidden, named after the program); the next pass removes it, and
// nothing else (found by tools/torture's kill trials: the staged files
// stayed for ever).
func TestPassRemovesLeftovers(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"local": a}, "local")
	cache := filepath.Join(dir, "cache")
	os.Mkdir(cache, 0o700)
	leftover := filepath.Join(cache, ".os-collect-config-3654033880.tmp")
	others := []string{"tmp123", "notes.tmp", ".os-collect-config-x.tmp"}
	for _, name := range append(others, filepath.Base(leftover)) {
		os.WriteFile(filepath.Join(cache, name), []byte(`{"x"`), 0o600)
	}
	r.pass(context.Background())
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the leftover is still there: %v", err)
	}
	for _, name := range others {
		if _, err := os.Stat(filepath.Join(cache, name)); err != nil {
			t.Errorf("%s, not the cache's, was removed: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".os-collect-config-") && e.Name() != ".os-collect-config-x.tmp" {
			t.Errorf("%s left after a pass", e.Name())
		}
	}
}

// A pass killed while it wrote its status record leaves the staged file
// in the status directory; a later pass removes it.
func TestPassRecordRemovesStaged(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"local": a}, "local")
	r.env.StatusDir = filepath.Join(dir, "run")
	os.Mkdir(r.env.StatusDir, 0o755)
	staged := filepath.Join(r.env.StatusDir, "."+agentstate.PassFile+".123")
	os.WriteFile(staged, []byte(`{"vers`), 0o600)
	longAgo := time.Now().Add(-time.Hour)
	os.Chtimes(staged, longAgo, longAgo)
	r.pass(context.Background())
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Errorf("the killed pass's staged record is still there: %v", err)
	}
}

// Deliberate fix: a key that cannot be a cache file, or that would
// replace another collector's document (a deployment named "heat"), is
// refused with one line naming it and its collector; the pass stores,
// runs and commits everything else.
func TestHostileKeysAreRefused(t *testing.T) {
	long := strings.Repeat("L", 250)
	heat := &fake{entries: []collectors.Entry{
		{Name: "heat", Content: doc(`{"whole": "metadata"}`)},
		{Name: "../x", Content: doc(`{}`)}, {Name: "a:b", Content: doc(`{}`)}, {Name: "a\nb", Content: doc(`{}`)},
		{Name: long, Content: doc(`{}`)}, {Name: "os_config_files", Content: doc(`{}`)},
		{Name: "heat", Content: doc(`{"only": "a deployment"}`)}, {Name: "local", Content: doc(`{}`)},
		{Name: "good", Content: doc(`{"g": 1}`)},
	}}
	local := &fake{entries: []collectors.Entry{{Name: "heat", Content: doc(`{}`)}, {Name: "l", Content: doc(`{"l": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"heat": heat, "local": local}, "heat", "local")
	h := &records{}
	r.log = slog.New(h)
	if st, _, err := r.pass(context.Background()); err != nil || st != 0 {
		t.Fatal(st, err)
	}
	c := dir + "/cache/"
	if got, want := calls(t, dir), []string{c + "heat.json:" + c + "good.json:" + c + "l.json"}; !slices.Equal(got, want) {
		t.Fatalf("OS_CONFIG_FILES %q, want %q", got, want)
	}
	if got, _ := os.ReadFile(c + "heat.json.last"); !strings.Contains(string(got), "whole") {
		t.Fatalf("heat.json.last is %q", got)
	}
	msgs := h.messages()
	for _, want := range []string{
		`Refusing metadata key from heat: not a valid cache key: "../x" holds a slash or NUL`,
		`Refusing metadata key from heat: not a valid cache key: "a:b" holds a colon, which OS_CONFIG_FILES cannot carry`,
		`Refusing metadata key from heat: not a valid cache key: "a\nb" holds a control character`,
		`Refusing metadata key from heat: not a valid cache key: "` + long + `" is longer than 245 bytes`,
		`Refusing metadata key from heat: not a valid cache key: "os_config_files" is the cache's list of files`,
		`Refusing metadata key "heat" from heat: it is the key of the heat collector`,
		`Refusing metadata key "local" from heat: it is the key of the local collector`,
		`Refusing metadata key "heat" from local: it is the key of the heat collector`,
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("no line %q in\n%s", want, msgs)
		}
	}
	entries, _ := os.ReadDir(c)
	for _, e := range entries {
		if !slices.Contains([]string{"heat", "good", "l", "os_config_files"}, strings.SplitN(e.Name(), ".json", 2)[0]) {
			t.Errorf("cache holds %q", e.Name())
		}
	}
}

// Deliberate fix: a key given twice in a pass (two deployments of one
// name, a local file named like a deployment) is stored once, with the
// later content, and listed at each place as before, with a WARNING. The
// reference stored both in turn under one file; the earlier content never
// matched .last, so the command ran on every pass, forever.
func TestDuplicateKeyStoredOnce(t *testing.T) {
	heat := &fake{entries: []collectors.Entry{{Name: "heat", Content: doc(`{}`)},
		{Name: "d", Content: doc(`{"v": 1}`)}, {Name: "e", Content: doc(`{}`)}}}
	local := &fake{entries: []collectors.Entry{{Name: "d", Content: doc(`{"v": 2}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"heat": heat, "local": local}, "heat", "local")
	h := &records{}
	r.log = slog.New(h)
	for range 3 {
		if st, _, err := r.pass(context.Background()); err != nil || st != 0 {
			t.Fatal(st, err)
		}
	}
	c := dir + "/cache/"
	if got, want := calls(t, dir), []string{c + "heat.json:" + c + "d.json:" + c + "e.json:" + c + "d.json"}; !slices.Equal(got, want) {
		t.Fatalf("commands run with %q, want once with %q", got, want)
	}
	if got, _ := os.ReadFile(c + "d.json.last"); !strings.Contains(string(got), "2") {
		t.Fatalf("d.json.last is %q", got)
	}
	if want := `Metadata key "d" is given more than once; only the last one (from local) is stored.`; !strings.Contains(h.messages(), want) {
		t.Fatalf("no line %q in\n%s", want, h.messages())
	}
}

// Issue 22: a truncated local file keeps its key's last committed data
// (read back from the cache's .last) in OS_CONFIG_FILES and
// os_config_files.json, in --one-time and after a restart (each run here
// is a fresh process's runner, with nothing in memory), with a WARNING
// naming the file, and the status record says the source is degraded,
// naming the file. Data stored but never committed (its command failed)
// is not what is kept. The reference's pass ran nothing; ours, before,
// ran and committed without the key.
func TestTruncatedLocalFileKeepsLastCommittedData(t *testing.T) {
	dir := t.TempDir()
	local, cache, status := dir+"/local", dir+"/cache", dir+"/run"
	os.MkdirAll(local, 0o755)
	put := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(local, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stderr strings.Builder
	run := func(command string) error {
		t.Helper()
		stderr.Reset()
		args := []string{"--config-file", "/dev/null", "--one-time", "-c", command, "--cachedir", cache,
			"--backup-cachedir", dir + "/backup", "--local-path", local, "local"}
		return Run(context.Background(), args, Env{Stdout: io.Discard, Stderr: &stderr, StatusDir: status})
	}
	record := func() agentstate.Collector {
		t.Helper()
		var p agentstate.Pass
		if err := agentstate.Read(filepath.Join(status, agentstate.PassFile), &p); err != nil || len(p.Collectors) != 1 {
			t.Fatalf("record %+v, %v", p, err)
		}
		return p.Collectors[0]
	}
	logCalls := `echo "$$OS_CONFIG_FILES" >> ` + dir + `/calls`
	put("base.json", `{"base": 1}`)
	put("role.json", `{"role": "compute"}`)
	if err := run(logCalls); err != nil {
		t.Fatal(err)
	}
	if r := record(); r.Result != "ok" || r.Reason != "" {
		t.Fatalf("first pass: %+v", r)
	}
	// A change whose command fails: stored, never committed.
	put("base.json", `{"base": 2}`)
	if err := run("false"); err == nil {
		t.Fatal("the failing command's pass succeeded")
	}
	// Now base.json is cut short while role.json changes.
	put("base.json", `{"base": `)
	put("role.json", `{"role": "controller"}`)
	both := cache + "/base.json.json:" + cache + "/role.json.json"
	for i, what := range []string{"one-time", "after a restart"} {
		if err := run(logCalls); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, stderr.String())
		}
		got := calls(t, dir)
		if len(got) != 2+i || got[len(got)-1] != both {
			t.Fatalf("%s: OS_CONFIG_FILES %q, want the last %q", what, got, both)
		}
		if b, _ := os.ReadFile(cache + "/base.json.json"); string(b) != "{\n \"base\": 1\n}" {
			t.Fatalf("%s: base.json.json is %q, want its last committed data", what, b)
		}
		if b, _ := os.ReadFile(cache + "/os_config_files.json"); !strings.Contains(string(b), "base.json.json") {
			t.Fatalf("%s: os_config_files.json lost the key: %s", what, b)
		}
		warn := local + "/base.json: not valid JSON (Expecting value: line 1 column 10 (char 9)); keeping the data key base.json was last committed with"
		if !strings.Contains(stderr.String(), warn) {
			t.Fatalf("%s: stderr lacks %q:\n%s", what, warn, stderr.String())
		}
		if r := record(); r.Result != "degraded" || !strings.Contains(r.Reason, local+"/base.json: not valid JSON") {
			t.Fatalf("%s: record %+v", what, r)
		}
		put("role.json", `{"role": "storage"}`) // so that the restart's pass runs the command too
	}
}
