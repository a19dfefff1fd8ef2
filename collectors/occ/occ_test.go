package occ

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/systemd"
)

// fake is a collector whose answer the test sets.
type fake struct {
	entries []collectors.Entry
	err     error
}

func (f *fake) Collect(context.Context) ([]collectors.Entry, error) { return f.entries, f.err }

// fakeConfig is the configuration of a fake: no options, the fake itself.
type fakeConfig struct{ f *fake }

func (c fakeConfig) Options() []config.Option { return nil }
func (c fakeConfig) New(collectors.Shared, *slog.Logger) (collectors.Collector, error) {
	return c.f, nil
}

func doc(s string) pyjson.Value {
	v, err := pyjson.Loads([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

func fakeRunner(t *testing.T, sources map[string]*fake, order ...string) (*runner, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &Config{
		Command:        `echo "$OS_CONFIG_FILES" >> ` + dir + `/calls`,
		CacheDir:       dir + "/cache",
		BackupCacheDir: dir + "/backup",
		Collectors:     order,
		OneTime:        true,
		Sources:        map[string]collectors.Config{},
	}
	for name, f := range sources {
		cfg.Sources[name] = fakeConfig{f}
	}
	return newRunner(cfg, Env{Stdout: io.Discard, Stderr: io.Discard}, logging.Discard), dir
}

// elapsed is a wait that is over at once.
func elapsed() <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

func calls(t *testing.T, dir string) []string {
	b, _ := os.ReadFile(dir + "/calls")
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

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

func TestRunRefusesUnknownCollector(t *testing.T) {
	var stderr strings.Builder
	err := Run(context.Background(), []string{"--config-file", "/dev/null", "-c", "true", "bogus"}, Env{Stdout: io.Discard, Stderr: &stderr})
	if err == nil || !strings.Contains(stderr.String(), "Unknown collectors ['bogus']") || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
		t.Fatalf("err %v stderr %q", err, stderr.String())
	}
}

// The configuration is checked on every pass (the reference: only after a
// command ran): an edited file restarts the daemon.
func TestConfigChangeRestarts(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/occ.conf"
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/x", []byte(`{"x": 1}`), 0o644)
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+"/backup\ncollectors = local\n[local]\npath = "+dir+"/local\n"), 0o644)
	restarted := false
	passes := 0
	env := Env{Stdout: io.Discard, Stderr: io.Discard,
		After: func(time.Duration) <-chan time.Time {
			passes++
			if passes == 2 { // between the second and third pass
				f, _ := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("polling_interval = 5\n")
				f.Close()
			}
			return elapsed()
		},
		Reexec: func() error { restarted = true; return nil },
	}
	err := Run(context.Background(), []string{"--config-file", conf}, env)
	if err != nil || !restarted || passes != 2 {
		t.Fatalf("err %v, restarted %v after %d sleeps", err, restarted, passes)
	}
}

func TestHangupRestarts(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	hup := make(chan os.Signal, 1)
	restarted := false
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Hangup: hup,
		After: func(time.Duration) <-chan time.Time {
			hup <- syscall.SIGHUP
			return nil // only the hangup ends the sleep
		},
		Reexec: func() error { restarted = true; return nil },
	}
	err := Run(context.Background(), []string{"--config-file", "/dev/null", "-c", "true", "--cachedir", dir + "/cache",
		"--backup-cachedir", dir + "/backup", "--local-path", dir + "/local", "local"}, env)
	if err != nil || !restarted {
		t.Fatalf("err %v, restarted %v", err, restarted)
	}
}

func daemonArgs(dir string) []string {
	return []string{"--config-file", "/dev/null", "-c", `echo run >> ` + dir + `/calls`, "--cachedir", dir + "/cache",
		"--backup-cachedir", dir + "/backup", "--local-path", dir + "/local", "--min-polling-interval", "1", "--polling-interval", "30", "local"}
}

// A change in a local directory wakes the sleeping daemon (fsnotify)
// instead of waiting for the next poll (30 s here).
func TestLocalChangeWakesTheDaemon(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	sleeps := make(chan time.Duration, 10)
	env := Env{Stdout: io.Discard, Stderr: io.Discard, After: func(d time.Duration) <-chan time.Time {
		sleeps <- d
		return time.After(30 * time.Second) // a long poll: only a wake-up ends it early
	}}
	go func() { done <- Run(ctx, daemonArgs(dir), env) }()
	<-sleeps // first pass done, sleeping
	os.WriteFile(dir+"/local/b", []byte(`{"b": 1}`), 0o644)
	select {
	case <-sleeps: // the second pass ran and sleeps again
	case <-ctx.Done():
		t.Fatal("the change did not wake the daemon")
	}
	if got := calls(t, dir); len(got) != 2 {
		t.Fatalf("command runs %q, want 2", got)
	}
	cancel()
	<-done
}

// After a pass with a change the next sleep is the minimum again (the
// reference kept doubling from process start).
func TestIntervalResetsAfterChange(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
	var waits []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := Env{Stdout: io.Discard, Stderr: io.Discard, After: func(d time.Duration) <-chan time.Time {
		waits = append(waits, d)
		switch len(waits) {
		case 3:
			os.WriteFile(dir+"/local/a", []byte(`{"a": 2}`), 0o644)
		case 5:
			cancel()
			return nil
		}
		return elapsed()
	}}
	Run(ctx, daemonArgs(dir), env)
	want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 1 * time.Second, 2 * time.Second}
	if len(waits) != len(want) {
		t.Fatalf("waits %v", waits)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
}

// --one-time-timeout bounds a one-time run and names what it waited for.
func TestOneTimeDeadlineNamesTheStage(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		hold       bool
		command    string
	}{
		{"hung command", "it was waiting for the command sleep 30", false, "sleep 30"},
		{"lock held", "it was waiting for the lock on", true, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(dir+"/local", 0o755)
			os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
			if tc.hold {
				os.Mkdir(dir+"/cache", 0o700)
				h, _ := os.Open(dir + "/cache")
				defer h.Close()
				syscall.Flock(int(h.Fd()), syscall.LOCK_EX)
			}
			var stderr strings.Builder
			start := time.Now()
			err := Run(context.Background(), []string{"--config-file", "/dev/null", "--one-time", "--one-time-timeout", "0.5",
				"-c", tc.command, "--cachedir", dir + "/cache", "--backup-cachedir", dir + "/backup", "--local-path", dir + "/local", "local"},
				Env{Stdout: io.Discard, Stderr: &stderr})
			if err == nil || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("err %v, stderr %q", err, stderr.String())
			}
			if time.Since(start) > 15*time.Second {
				t.Fatal("the deadline did not stop the run")
			}
		})
	}
}

// A fractional --splay works (the reference's integer randrange died on
// it) and delays the first pass by less than the splay.
func TestFractionalSplay(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	var first time.Duration
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := Env{Stdout: io.Discard, Stderr: io.Discard, After: func(d time.Duration) <-chan time.Time {
		n++
		if n == 1 {
			first = d
			return elapsed()
		}
		cancel()
		return nil
	}}
	Run(ctx, append(daemonArgs(dir), "--splay", "0.5"), env)
	if n < 2 || first >= 500*time.Millisecond {
		t.Fatalf("first sleep %v after %d sleeps", first, n)
	}
}

// Under systemd the daemon says READY after its first cycle, STATUS after
// later ones, feeds the watchdog from its loop, and says STOPPING at exit.
func TestDaemonNotifiesSystemd(t *testing.T) {
	sock := t.TempDir() + "/notify.sock"
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "1000000") // pings due every 0.5 s
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sleeps := 0
	env := Env{Stdout: io.Discard, Stderr: io.Discard, Notify: systemd.New(),
		After: func(d time.Duration) <-chan time.Time {
			sleeps++
			if d > 500*time.Millisecond {
				t.Errorf("slept %v in one go with a 0.5 s watchdog", d)
			}
			if sleeps == 4 {
				cancel()
				return nil
			}
			return time.After(300 * time.Millisecond) // let ping intervals pass
		}}
	Run(ctx, daemonArgs(dir), env)
	var got []string
	buf := make([]byte, 4096)
	for {
		conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		got = append(got, string(buf[:n]))
	}
	all := strings.Join(got, "|")
	if !strings.HasPrefix(all, "READY=1\nSTATUS=last pass") || !strings.Contains(all, "WATCHDOG=1") || !strings.HasSuffix(all, "STOPPING=1") {
		t.Fatalf("notifications %q", all)
	}
}

// records keeps what a logger was given.
type records struct {
	mu  sync.Mutex
	got []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r)
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// messages are the records' messages, a line each.
func (h *records) messages() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.got {
		out = append(out, r.Message)
	}
	return strings.Join(out, "\n")
}

// events are the journal-only records, each as "msg k=v k=v" with the
// command's duration left out.
func (h *records) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.got {
		if r.Level != logging.LevelEvent {
			continue
		}
		line := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "command_seconds" {
				if _, err := strconv.ParseFloat(a.Value.String(), 64); err != nil {
					line += " bad-seconds=" + a.Value.String()
				}
				return true
			}
			line += " " + a.Key + "=" + a.Value.String()
			return true
		})
		out = append(out, line)
	}
	return out
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

// A configuration file that turns invalid (a bad value, an unknown
// collector) is reported once and ignored, SIGHUP included: the daemon
// keeps running with what it read at start, and restarts once the file
// is valid again.
func TestInvalidConfigKeepsTheDaemonRunning(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/occ.conf"
	os.MkdirAll(dir+"/local", 0o755)
	good := "[DEFAULT]\ncommand = true\ncachedir = " + dir + "/cache\nbackup_cachedir = " + dir + "/backup\ncollectors = local\n[local]\npath = " + dir + "/local\n"
	os.WriteFile(conf, []byte(good), 0o644)
	hup := make(chan os.Signal, 1)
	var stderr strings.Builder
	restarted, sleeps := false, 0
	env := Env{Stdout: io.Discard, Stderr: &stderr, Hangup: hup,
		After: func(time.Duration) <-chan time.Time {
			sleeps++
			switch sleeps {
			case 1:
				os.WriteFile(conf, []byte("[DEFAULT]\npolling_interval = soon\n"+good), 0o644)
			case 3:
				os.WriteFile(conf, []byte(strings.Replace(good, "collectors = local", "collectors = local,bogus", 1)), 0o644)
			case 4:
				hup <- syscall.SIGHUP
				return nil
			case 5:
				os.WriteFile(conf, []byte("[DEFAULT]\npolling_interval = 5\n"+good), 0o644)
			}
			return elapsed()
		},
		Reexec: func() error { restarted = true; return nil },
	}
	err := Run(context.Background(), []string{"--config-file", conf}, env)
	if err != nil || !restarted || sleeps != 5 {
		t.Fatalf("err %v, restarted %v after %d sleeps\n%s", err, restarted, sleeps, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `invalid value "soon" for option polling-interval (from `+conf) ||
		!strings.Contains(lines[1], "Unknown collectors ['local,bogus']") || !strings.Contains(lines[2], "Configuration changed; restarting") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}

// No secret reaches a log line at any level: passwords and keys from the
// configuration, and the signature of a temporary URL, through a run with
// --debug where the server fails.
func TestSecretsNeverLogged(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no "+r.URL.RawQuery, http.StatusInternalServerError)
	}))
	defer srv.Close()
	conf := dir + "/occ.conf"
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+"/backup\n"+
		"[cfn]\naccess_key_id = AKIDPUBLIC\nsecret_access_key = S3CRET-cfn\nmetadata_url = http://127.0.0.1:1/v1/\n"+
		"[heat]\npassword = S3CRET-heat\nuser_id = u\nproject_id = p\nauth_url = http://127.0.0.1:1/v3\n"+
		"[zaqar]\npassword = S3CRET-zaqar\n"+
		"[request]\nmetadata_url = "+srv.URL+"/m?temp_url_sig=S3CRET-sig&temp_url_expires=1\ntimeout = 2\n"), 0o644)
	var stderr strings.Builder
	Run(context.Background(), []string{"--config-file", conf, "--debug", "--one-time", "cfn", "heat", "zaqar", "request"},
		Env{Stdout: io.Discard, Stderr: &stderr})
	if !strings.Contains(stderr.String(), "Source [request] Unavailable.") {
		t.Fatalf("the run did not try the request collector:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "S3CRET") {
		t.Fatalf("a secret in the log:\n%s", stderr.String())
	}
	// The attributes, which become journal fields, too.
	cfg, err := Parse([]string{"--config-file", conf, "--one-time", "cfn", "heat", "zaqar", "request"}, config.Env{})
	if err != nil {
		t.Fatal(err)
	}
	h := &records{}
	newRunner(cfg, Env{Stdout: io.Discard, Stderr: io.Discard}, slog.New(h)).pass(context.Background())
	var all strings.Builder
	for _, rec := range h.got {
		all.WriteString(rec.Message)
		rec.Attrs(func(a slog.Attr) bool { all.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
		all.WriteString("\n")
	}
	if !strings.Contains(all.String(), "reason=") || strings.Contains(all.String(), "S3CRET") {
		t.Fatalf("records:\n%s", all.String())
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

// brokenConfig is a collector whose configuration cannot work until the
// test mends it.
type brokenConfig struct {
	fakeConfig
	broken *bool
}

func (c brokenConfig) New(s collectors.Shared, log *slog.Logger) (collectors.Collector, error) {
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
