package occ

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/systemd"
)

// elapsed is a wait that is over at once.
func elapsed() <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
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
	// The write is two events (create, then write): on a loaded machine
	// they can come more than the debounce apart, and the pass woken by
	// the first reads an empty file, runs nothing, and the second wakes
	// another. Either way the command runs long before the poll's 30 s.
	for got := calls(t, dir); len(got) < 2; got = calls(t, dir) {
		select {
		case <-sleeps: // a pass ran and sleeps again
		case <-ctx.Done():
			t.Fatalf("the change did not wake the daemon: command runs %q, want 2", got)
		}
	}
	if got := calls(t, dir); len(got) != 2 {
		t.Fatalf("command runs %q, want 2", got)
	}
	cancel()
	<-done
}

// After a pass with a change the next sleep is the minimum again (the
// reference kept doubling from process start). --nojitter: the
// reference's exact sleeps.
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
	Run(ctx, append(daemonArgs(dir), "--nojitter"), env)
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

// listenNotify is systemd's end of sd_notify for one test: NOTIFY_SOCKET
// points at it.
func listenNotify(t *testing.T) *net.UnixConn {
	t.Helper()
	sock := t.TempDir() + "/notify.sock"
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", sock)
	return conn
}

// Under systemd the daemon says READY after its first cycle, STATUS after
// later ones, feeds the watchdog from its loop, and says STOPPING at exit.
func TestDaemonNotifiesSystemd(t *testing.T) {
	conn := listenNotify(t)
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

// With no command configured the daemon prints and exits 0, as the
// reference does; under systemd it says READY first, so that the
// Type=notify unit stops cleanly instead of being restarted forever.
func TestNoCommandIsACleanStopUnderSystemd(t *testing.T) {
	conn := listenNotify(t)
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	conf := dir + "/occ.conf"
	os.WriteFile(conf, []byte("[DEFAULT]\ncollectors = local\n[local]\npath = "+dir+"/local\n"), 0o644)
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: io.Discard, Notify: systemd.New()}
	if err := Run(context.Background(), []string{"--config-file", conf}, env); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.String() != "{}\n" {
		t.Errorf("printed %q, want {}", out.String())
	}
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(time.Second))
	n, err := conn.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "READY=1\nSTATUS=no command configured") {
		t.Fatalf("notification %q (%v), want READY with the reason", buf[:n], err)
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

// SIGTERM during a command that rewrites the configuration (the first
// refresh of a deployed server renders /etc/os-collect-config.conf) stops
// the daemon: it must not re-execute itself while systemd waits for it
// to exit.
func TestStopDuringAConfigChangingCommand(t *testing.T) {
	dir := t.TempDir()
	conf := dir + "/occ.conf"
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a.json", []byte(`{"a": 1}`), 0o644)
	cmd := dir + "/cmd"
	os.WriteFile(cmd, []byte("#!/bin/sh\necho '[DEFAULT]' >> "+conf+"\ntouch "+dir+"/started\nsleep 30\n"), 0o755)
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = "+cmd+"\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+
		"/backup\ncollectors = local\n[local]\npath = "+dir+"/local\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // stops the daemon once the command runs
		for ctx.Err() == nil {
			if _, err := os.Stat(dir + "/started"); err == nil {
				cancel()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var stderr strings.Builder
	restarted := false
	env := Env{Stdout: io.Discard, Stderr: &stderr, Reexec: func() error { restarted = true; return nil }}
	err := Run(ctx, []string{"--config-file", conf}, env)
	if exitcode.Of(err) != exitcode.Terminated || restarted {
		t.Fatalf("exit %d, re-executed %v\n%s", exitcode.Of(err), restarted, stderr.String())
	}
}

// After a pass with a source unavailable, the sleep before the next pass
// is a WARNING (the reference's INFO line, hidden at its default level):
// the backoff shows beside the failure. Healthy passes keep it at INFO.
// (The reference's exact sleeps, --nojitter, keep the lines exact.)
func TestBackoffShowsAfterAnUnavailableSource(t *testing.T) {
	dir := t.TempDir()
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gets++; gets <= 3 {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"a": 1}`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sleeps := 0
	var stderr strings.Builder
	env := Env{Stdout: io.Discard, Stderr: &stderr, After: func(time.Duration) <-chan time.Time {
		if sleeps++; sleeps == 6 {
			cancel()
			return nil
		}
		return elapsed()
	}}
	Run(ctx, []string{"--config-file", "/dev/null", "-c", "true", "--cachedir", dir + "/cache", "--backup-cachedir", dir + "/backup",
		"--request-metadata-url", srv.URL + "/meta", "--min-polling-interval", "1", "--polling-interval", "4", "--nojitter", "request"}, env)
	failed := "404 Not Found for url: " + srv.URL + "/meta\nSource [request] Unavailable.\n"
	want := failed + "Sleeping 1.00 seconds.\n" + failed + "Sleeping 2.00 seconds.\n" + failed + "Sleeping 4.00 seconds.\n"
	if stderr.String() != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

// Settle runs once, when the daemon is done with its first pass (before
// its first wait); a one-time run never calls it.
func TestSettleOnceInTheDaemonOnly(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
	var events []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := Env{Stdout: io.Discard, Stderr: io.Discard,
		Settle: func() { events = append(events, "settle") },
		After: func(time.Duration) <-chan time.Time {
			events = append(events, "wait")
			if len(events) == 4 {
				cancel()
				return nil
			}
			return elapsed()
		}}
	Run(ctx, daemonArgs(dir), env)
	if got, want := strings.Join(events, " "), "settle wait wait wait"; got != want {
		t.Errorf("daemon: %s, want %s", got, want)
	}

	events = nil
	if err := Run(context.Background(), append(daemonArgs(dir), "--one-time"), env); err != nil {
		t.Fatal(err)
	}
	if len(events) != 0 {
		t.Errorf("--one-time: %v, want nothing", events)
	}
}
