package main

import (
	"context"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/test/fleet"
	"github.com/tripleo-go/agent/test/fleet/zaqarmodel"
)

// TestMain lets the test binary be the listeners' process, as fleetsim
// is: startListenProc runs os.Executable with "listen".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "listen" {
		if err := listenMain(context.Background(), os.Args[2:]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The probes variant's sockets live in a process of their own, at nice
// 10, and every push they receive comes back to the simulation.
func TestListenProcessReportsEveryPush(t *testing.T) {
	const queues = 3
	cloud := zaqarmodel.New(zaqarmodel.Options{Queues: queues, DocBytes: 512}, time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cloud.Serve(ctx, ln)
	p, err := startListenProc(zaqarmodel.AuthURL("http://"+ln.Addr().String()), 0, queues)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	waitFor(t, "every queue subscribed", func() bool { return cloud.Open() == queues })
	if nice := niceOf(t, p.cmd.Process.Pid); nice != 10 {
		t.Errorf("the listeners run at nice %d, want 10", nice)
	}
	// A socket is open before it is subscribed: change until every
	// queue is pushed the latest version.
	var version int
	waitFor(t, "a push to every queue", func() bool {
		if version, _ = cloud.Change(); version > 1 {
			time.Sleep(200 * time.Millisecond)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		got := map[int]bool{}
		for _, r := range p.pushes {
			got[r.Agent] = got[r.Agent] || r.Version == version
		}
		return len(got) == queues && !slices.Contains(slices.Collect(maps.Values(got)), false)
	})
	for _, r := range p.stop() {
		if r.Agent < 0 || r.Agent >= queues || r.Version < 1 || r.Version > version {
			t.Errorf("a push of version %d to queue %d; want queues 0..%d, versions 1..%d", r.Version, r.Agent, queues-1, version)
		}
	}
}

func TestParsePush(t *testing.T) {
	for _, tc := range []struct {
		line string
		want fleet.Run
		ok   bool
	}{
		{"7 1700000000123456789 3", fleet.Run{Agent: 7, At: time.Unix(0, 1700000000123456789), Version: 3}, true},
		{"7 1700000000123456789", fleet.Run{}, false},
		{"x 1 2", fleet.Run{}, false},
	} {
		got, ok := parsePush(tc.line)
		if ok != tc.ok || !got.At.Equal(tc.want.At) || got.Agent != tc.want.Agent || got.Version != tc.want.Version {
			t.Errorf("parsePush(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// niceOf is the nice value of pid's main thread (field 19 of its stat).
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, err := strconv.Atoi(fields[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
