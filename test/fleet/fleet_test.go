package fleet

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/tripleo-go/agent/test/fleet/model"
)

// A small fleet of real daemons against the model: every agent runs its
// command with the first document, then with the changed one, and polls
// with conditional GETs in between.
func TestFleetSeesEveryChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs daemons for seconds")
	}
	const n = 20
	e := model.New(model.Options{DocBytes: 2048, Bucket: 100 * time.Millisecond}, time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan struct{})
	go func() { e.Serve(ctx, ln); close(served) }()
	defer func() { cancel(); <-served }()
	url := "http://" + ln.Addr().String() + "/doc"
	f, err := Start(ctx, Options{N: n, Dir: t.TempDir(), Stagger: 200 * time.Millisecond, Conf: func(i int, dir string) string {
		return fmt.Sprintf("[DEFAULT]\ncommand = os-refresh-config\ncachedir = %s/cache\nbackup_cachedir = %s/backup\n"+
			"collectors = request\npolling_interval = 0.5\nmin_polling_interval = 0.1\n[request]\nmetadata_url = %s\n", dir, dir, url)
	}})
	if err != nil {
		t.Fatal(err)
	}
	// every agent has run version 0, then change and wait for version 1
	waitFor := func(v int) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			seen := map[int]bool{}
			for _, r := range f.Runs() {
				if r.Version == v {
					seen[r.Agent] = true
				}
			}
			if len(seen) == n {
				return
			}
		}
		t.Fatalf("not every agent ran version %d: %v", v, f.Runs())
	}
	waitFor(0)
	// and has polled once with nothing new (a conditional GET) before
	// the change: on a busy machine the change could otherwise come
	// before any agent's next poll, and no 304 would be seen
	for deadline := time.Now().Add(30 * time.Second); e.Stats().Kinds["GET 304"] == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no conditional GET in 30 s: %v", e.Stats().Kinds)
		}
	}
	e.Change()
	waitFor(1)
	if err := f.Stop(); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if st.Kinds["GET 200"] != 2*n || st.Kinds["GET 304"] == 0 || len(st.Kinds) != 2 {
		t.Fatalf("requests %v: want one full GET per agent and version, conditional GETs otherwise", st.Kinds)
	}
	if lines, last := f.Logged(); lines != 0 {
		t.Fatalf("%d log lines: %v", lines, last)
	}
	if m := MemoryNow(); m.RSS <= 0 || m.Heap <= 0 {
		t.Fatalf("memory %+v", m)
	}
}

// Our agents' HTTP clients are cloned from the default transport: the
// wire counter sees their bytes, by port.
func TestWireCountsTheAgentsBytes(t *testing.T) {
	w := CountWire()
	e := model.New(model.Options{DocBytes: 5000}, time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { e.Serve(ctx, ln); close(served) }()
	defer func() { cancel(); <-served }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	f, err := Start(ctx, Options{N: 1, Dir: t.TempDir(), Conf: func(i int, dir string) string {
		return fmt.Sprintf("[DEFAULT]\ncommand = x\ncachedir = %s/cache\nbackup_cachedir = %s/backup\ncollectors = request\n[request]\nmetadata_url = http://%s/doc\n",
			dir, dir, ln.Addr())
	}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); len(f.Runs()) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	f.Stop()
	sent, received := w.Counts()
	if received[port] < 5000 || sent[port] < 50 {
		t.Fatalf("sent %v, received %v; want the 5000-byte document from port %s", sent, received, port)
	}
}
