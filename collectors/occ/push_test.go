package occ

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

const zaqarPassword = "S3CRET-pw"

// zaqarConf writes a configuration of the zaqar collector over
// websockets, polling once an hour, and returns its directory and the
// arguments that name it.
func zaqarConf(t *testing.T, c *zaqartest.Cloud) (dir string, args []string) {
	dir = t.TempDir()
	conf := dir + "/occ.conf"
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = echo run >> "+dir+"/calls\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+
		"/backup\ncollectors = zaqar\npolling_interval = 3600\nmin_polling_interval = 3600\n[zaqar]\nauth_url = "+c.AuthURL()+
		"\nuser_id = uid\nproject_id = pid\npassword = "+zaqarPassword+"\nqueue_id = q1\nuse_websockets = true\n"), 0o600)
	return dir, []string{"--config-file", conf}
}

// A message posted to the queue wakes the daemon at once, though it
// polls once an hour; a stop while subscribed returns promptly, its
// socket closed and its goroutines gone.
func TestZaqarPushWakesTheDaemon(t *testing.T) {
	c := zaqartest.New("q1", zaqarPassword)
	defer c.Close()
	c.Post(`{"v": 1}`)
	dir, args := zaqarConf(t, c)
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr strings.Builder
	env := Env{Stdout: io.Discard, Stderr: &syncWriter{w: &stderr},
		After: func(time.Duration) <-chan time.Time { return nil }} // an hour is forever here
	done := make(chan error, 1)
	go func() { done <- Run(ctx, append(args, "--debug"), env) }()
	waitUntil(t, "the first run and the subscription", func() bool {
		return runs(dir) == 1 && strings.Contains(env.Stderr.(*syncWriter).String(), "Subscribed to Zaqar queue")
	})
	before := c.Actions()
	start := time.Now()
	c.Post(`{"v": 2}`)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(env.Stderr.(*syncWriter).String(), c.Actions(), c.Pending(), c.Subscribers())
		}
	})
	waitUntil(t, "the pushed change's run", func() bool { return runs(dir) == 2 })
	t.Logf("posted → command ran in %v", time.Since(start))
	if a := c.Actions(); a["authenticate"] != before["authenticate"] || a["subscription_create"] != before["subscription_create"] {
		t.Fatalf("one socket across passes: %v, %v before the push", a, before)
	}
	start = time.Now()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon did not stop")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("stopping took %v", took)
	}
	waitUntil(t, "the socket closed", func() bool { return c.Subscribers() == 0 })
	c.Srv.CloseClientConnections()
	waitUntil(t, "no goroutine left", func() bool { return runtime.NumGoroutine() <= base })
	if strings.Contains(env.Stderr.(*syncWriter).String(), zaqarPassword) {
		t.Fatal("the password in the log")
	}
}

// SIGHUP while subscribed: the socket is closed with a close frame
// before the daemon re-executes itself.
func TestZaqarHangupClosesTheSocket(t *testing.T) {
	c := zaqartest.New("q1", zaqarPassword)
	defer c.Close()
	c.Post(`{"v": 1}`)
	_, args := zaqarConf(t, c)
	hup := make(chan os.Signal, 1)
	var stderr strings.Builder
	closedAtReexec := -1
	env := Env{Stdout: io.Discard, Stderr: &syncWriter{w: &stderr}, Hangup: hup,
		After: func(time.Duration) <-chan time.Time { return nil },
		Reexec: func() error {
			waitUntil(t, "a clean close", func() bool { return c.CleanCloses() >= 1 && c.Subscribers() == 0 })
			closedAtReexec = c.Subscribers()
			return nil
		}}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), append(args, "--debug"), env) }()
	waitUntil(t, "the subscription", func() bool {
		return strings.Contains(env.Stderr.(*syncWriter).String(), "Subscribed to Zaqar queue")
	})
	hup <- syscall.SIGHUP
	select {
	case err := <-done:
		if err != nil || closedAtReexec != 0 {
			t.Fatalf("err %v, %d subscribers at re-execution", err, closedAtReexec)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP did not restart the daemon")
	}
}

// --one-time: one socket for the pass, closed with it, as before.
func TestZaqarOneTimeKeepsNoSocket(t *testing.T) {
	c := zaqartest.New("q1", zaqarPassword)
	defer c.Close()
	c.Post(`{"v": 1}`)
	dir, args := zaqarConf(t, c)
	if err := Run(context.Background(), append(args, "--one-time"), Env{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if got := calls(t, dir); len(got) != 1 {
		t.Fatalf("command runs %q", got)
	}
	a := c.Actions()
	if a["authenticate"] != 1 || a["subscription_create"] != 1 || a["message_list"] != 0 || c.Subscribers() != 0 {
		t.Fatalf("one-time: %v, %d subscribers", a, c.Subscribers())
	}
}

// runs is how many times the command ran.
func runs(dir string) int {
	b, _ := os.ReadFile(dir + "/calls")
	return strings.Count(string(b), "run\n")
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within 5 s", what)
		}
	}
}

// syncWriter serialises the writes of the daemon's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.(fmt.Stringer).String()
}
