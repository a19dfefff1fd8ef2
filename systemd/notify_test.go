package systemd

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen makes a NOTIFY_SOCKET and returns a function that reads what
// was sent so far.
func listen(t *testing.T) func() []string {
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return func() []string {
		var got []string
		buf := make([]byte, 4096)
		for {
			conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			n, err := conn.Read(buf)
			if err != nil {
				return got
			}
			got = append(got, string(buf[:n]))
		}
	}
}

func TestNotifications(t *testing.T) {
	read := listen(t)
	t.Setenv("WATCHDOG_USEC", "2000000")
	n := New()
	if n.WatchdogInterval() != time.Second {
		t.Fatalf("watchdog interval %v", n.WatchdogInterval())
	}
	n.Ready("up")
	n.Ping()
	n.Ping() // too soon: not sent again
	n.Status("busy")
	n.Stopping()
	got := strings.Join(read(), "|")
	if got != "READY=1\nSTATUS=up|WATCHDOG=1|STATUS=busy|STOPPING=1" {
		t.Fatalf("sent %q", got)
	}
}

func TestNilAndOffSystemdDoNothing(t *testing.T) {
	var n *Notifier
	n.Ready("x")
	n.Ping()
	if n.WatchdogInterval() != 0 {
		t.Fatal("nil notifier has a watchdog")
	}
	t.Setenv("NOTIFY_SOCKET", "")
	New().Ready("x") // no socket: no error, no effect
}
