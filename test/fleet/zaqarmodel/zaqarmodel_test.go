package zaqarmodel

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/test/fleet/model"
)

// serve starts a model of n queues and returns it with its base URL.
func serve(t *testing.T, n int) (*Cloud, string) {
	t.Helper()
	c := New(Options{Queues: n, DocBytes: 512}, time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return c, "http://" + ln.Addr().String()
}

// nodeQueue is node i's client of the model: the agent's own Zaqar client.
func nodeQueue(t *testing.T, base string, i int) *zaqar.Queue {
	t.Helper()
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &keystone.Session{Creds: keystone.Credentials{AuthURL: AuthURL(base), UserID: UserID, ProjectID: ProjectID,
		Password: Password}, HTTP: client.Standard()}
	return &zaqar.Queue{Session: s, Name: QueueName(i), Client: client, Log: logging.Discard}
}

// Every queue starts with version 0; a change posts the next version to
// every queue; over HTTP a node lists, then pops, its own queue only.
func TestChangesArePostedToEveryQueue(t *testing.T) {
	c, base := serve(t, 3)
	ctx := context.Background()
	q0, q2 := nodeQueue(t, base, 0), nodeQueue(t, base, 2)
	if got, err := q0.PopNewest(ctx); err != nil || model.Version(got) != 0 {
		t.Fatalf("first pop: %.40s, %v", got, err)
	}
	if got, err := q0.PopNewest(ctx); err != nil || got != nil {
		t.Fatalf("an emptied queue gave %.40s, %v", got, err)
	}
	if v, _ := c.Change(); v != 1 {
		t.Fatalf("change gave version %d", v)
	}
	if got, err := q0.PopNewest(ctx); err != nil || model.Version(got) != 1 {
		t.Fatalf("after the change: %.40s, %v", got, err)
	}
	// queue 2 was not popped: it holds both, and the newest wins
	if got, err := q2.PopNewest(ctx); err != nil || model.Version(got) != 1 {
		t.Fatalf("queue 2: %.40s, %v", got, err)
	}
	s := c.Stats()
	// two nodes authenticated once each; 4 listings, 3 pops (one listing
	// found nothing, and its pass did not pop)
	if s.Services["keystone"] != 2 || s.Services["zaqar"] != 7 || s.Kinds["zaqar pop"] != 3 || s.Kinds["zaqar GET"] != 4 {
		t.Fatalf("services %v, kinds %v", s.Services, s.Kinds)
	}
}

// A socket subscribed to its queue is pushed a change at once; its
// frames are counted apart from its requests, a ping answered by a pong
// being frames only.
func TestAChangeIsPushedToTheSubscribedSocket(t *testing.T) {
	c, base := serve(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := nodeQueue(t, base, 1)
	if got, err := q.PopOrWait(ctx, time.Second); err != nil || model.Version(got) != 0 {
		t.Fatalf("first pass: %.40s, %v", got, err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, err := q.PopOrWait(ctx, 5*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	for c.Open() == 0 || c.Stats().FrameKinds["in message_delete_many"] < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	c.Change()
	if b := <-got; model.Version(b) != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("pushed %.40s after %s", b, time.Since(start))
	}
	s := c.Stats()
	// per pass: the upgrade, authenticate, queue_create,
	// subscription_create, message_delete_many
	if s.Services["zaqar-ws"] != 10 || s.FrameKinds["out notification"] != 1 || s.FrameKinds["out response"] != 8 {
		t.Fatalf("services %v, frames %v", s.Services, s.FrameKinds)
	}
	if n := sum(s.Frames); n != 17 {
		t.Fatalf("%v frames, want 8 requests, 8 responses and a push", n)
	}
	// a ping
	conn := dial(t, base)
	if err := conn.WriteControl(websocket.PingMessage, []byte("p"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	pong := make(chan struct{})
	conn.SetPongHandler(func(string) error { close(pong); return nil })
	go conn.ReadMessage()
	select {
	case <-pong:
	case <-ctx.Done():
		t.Fatal("no pong")
	}
	s2 := c.Stats()
	if s2.FrameKinds["in ping"] != 1 || s2.FrameKinds["out pong"] != 1 || s2.Services["zaqar-ws"] != 11 {
		t.Fatalf("after a ping: services %v, frames %v", s2.Services, s2.FrameKinds)
	}
}

// An outage drops every socket and holds new requests until it ends.
func TestAnOutageDropsTheSockets(t *testing.T) {
	c, base := serve(t, 1)
	conn := dial(t, base)
	for c.Open() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Outage(model.Hang); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := conn.ReadMessage(); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the socket outlived the outage: %v", err)
	}
	held := make(chan error, 1)
	go func() {
		_, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
		held <- err
	}()
	select {
	case err := <-held:
		t.Fatalf("a socket opened during the outage: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	c.Outage("")
	if err := <-held; err != nil {
		t.Fatalf("after the outage: %v", err)
	}
}

func dial(t *testing.T, base string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func sum(s []float64) float64 {
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t
}
