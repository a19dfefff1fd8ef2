package zaqarws

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// one is a backend of one queue "q" and one token "tok".
type one struct {
	mu      sync.Mutex
	expired bool
	pending []string
	subs    map[*func(string)]bool
}

func (b *one) Authenticate(token string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return token == "tok" && !b.expired
}
func (b *one) HasQueue(name string) bool { return name == "q" }
func (b *one) Pop(_ string, n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, len(b.pending))
	out := b.pending[:n]
	b.pending = b.pending[n:]
	return out
}
func (b *one) List(_ string, n int) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.pending[:min(n, len(b.pending))]...)
}
func (b *one) Subscribe(_ string, push func(string)) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[*func(string)]bool{}
	}
	k := &push
	b.subs[k] = true
	return func() { b.mu.Lock(); delete(b.subs, k); b.mu.Unlock() }
}
func (b *one) post(body string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, `{"body": `+body+`}`)
	for p := range b.subs {
		(*p)(body)
	}
}

type client struct {
	t    *testing.T
	conn *websocket.Conn
}

func connect(t *testing.T, s *Server) *client {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t, conn}
}

type answer struct {
	Request *struct{ Action string } `json:"request"`
	Headers struct{ Status int }     `json:"headers"`
	Body    json.RawMessage          `json:"body"`
}

func (c *client) read() answer {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var a answer
	if err := c.conn.ReadJSON(&a); err != nil {
		c.t.Fatal(err)
	}
	return a
}

// do sends a request and returns the status of its answer and its body.
func (c *client) do(action string, body map[string]any, headers map[string]string) (int, string) {
	c.t.Helper()
	h := map[string]string{"Client-ID": "c1", "X-Project-ID": "pid"}
	for k, v := range headers {
		h[k] = v
	}
	if err := c.conn.WriteJSON(map[string]any{"action": action, "headers": h, "body": body}); err != nil {
		c.t.Fatal(err)
	}
	a := c.read()
	if a.Request == nil || a.Request.Action != action {
		c.t.Fatalf("%s answered by %+v", action, a)
	}
	return a.Headers.Status, string(a.Body)
}

// The protocol's rows: what each action answers before and after
// authentication, a listing that leaves the messages and a pop that
// takes them.
func TestActions(t *testing.T) {
	b := &one{}
	c := connect(t, &Server{Backend: b, ProjectID: "pid"})
	b.post(`{"n": 1}`)
	q := map[string]any{"queue_name": "q"}
	for _, row := range []struct {
		action  string
		body    map[string]any
		headers map[string]string
		status  int
		answer  string
	}{
		{"queue_create", q, nil, 403, `{}`},
		{"authenticate", nil, map[string]string{"X-Auth-Token": "bad"}, 401, `{"error": "auth"}`},
		{"authenticate", nil, map[string]string{"X-Project-ID": "other", "X-Auth-Token": "tok"}, 400, `{"error": "headers"}`},
		{"authenticate", nil, map[string]string{"X-Auth-Token": "tok"}, 200, `{}`},
		{"queue_create", map[string]any{"queue_name": "other"}, nil, 403, `{}`},
		{"queue_create", q, nil, 201, `{}`},
		{"message_list", q, nil, 200, `{"messages": [{"body": {"n": 1}}]}`},
		{"message_delete_many", map[string]any{"queue_name": "q", "pop": 20}, nil, 200, `{"messages": [{"body": {"n": 1}}]}`},
		{"message_delete_many", map[string]any{"queue_name": "q", "pop": 20}, nil, 200, `{"messages": []}`},
		{"message_delete_many", map[string]any{"queue_name": "q", "message_ids": []string{"m1"}}, nil, 400, `{"error": "pop"}`},
		{"queue_delete", q, nil, 400, `{"error": "unknown action"}`},
	} {
		if st, body := c.do(row.action, row.body, row.headers); st != row.status || body != row.answer {
			t.Errorf("%s %v: %d %s, want %d %s", row.action, row.headers, st, body, row.status, row.answer)
		}
	}
}

// A subscribed connection is pushed every message posted until its
// subscription's ttl ends; subscribing again renews it.
func TestPushesEndWithTheTTL(t *testing.T) {
	b := &one{}
	var mu sync.Mutex
	frames := map[string]int{}
	c := connect(t, &Server{Backend: b, ProjectID: "pid", OnFrame: func(in bool, kind string, _ int) {
		mu.Lock()
		defer mu.Unlock()
		frames[map[bool]string{true: "in ", false: "out "}[in]+kind]++
	}})
	c.do("authenticate", nil, map[string]string{"X-Auth-Token": "tok"})
	if st, _ := c.do("subscription_create", map[string]any{"queue_name": "q", "ttl": 0.3}, nil); st != 201 {
		t.Fatalf("subscription_create: %d", st)
	}
	b.post(`{"n": 1}`)
	if a := c.read(); a.Request != nil || !strings.Contains(string(a.Body), `"n": 1`) {
		t.Fatalf("pushed %+v", a)
	}
	time.Sleep(400 * time.Millisecond)
	b.post(`{"n": 2}`) // after the ttl: not pushed
	c.do("subscription_create", map[string]any{"queue_name": "q", "ttl": 60}, nil)
	b.post(`{"n": 3}`)
	if a := c.read(); a.Request != nil || !strings.Contains(string(a.Body), `"n": 3`) {
		t.Fatalf("pushed after the renewal: %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if frames["out notification"] != 2 || frames["in subscription_create"] != 2 || frames["out response"] != 3 {
		t.Fatalf("frames %v", frames)
	}
}

// Once the socket's token expires its requests are refused; a refused
// subscription answers 503; a clean close is told apart.
func TestExpiredTokenRefusedSubscriptionAndClose(t *testing.T) {
	b := &one{}
	var refuse atomic.Bool
	closed := make(chan bool, 1)
	c := connect(t, &Server{Backend: b, ProjectID: "pid", RefuseSubscriptions: refuse.Load,
		OnClosed: func(clean bool) { closed <- clean }})
	c.do("authenticate", nil, map[string]string{"X-Auth-Token": "tok"})
	refuse.Store(true)
	if st, _ := c.do("subscription_create", map[string]any{"queue_name": "q"}, nil); st != 503 {
		t.Fatalf("refused subscription: %d", st)
	}
	b.mu.Lock()
	b.expired = true
	b.mu.Unlock()
	if st, body := c.do("queue_create", map[string]any{"queue_name": "q"}, nil); st != 401 || body != `{"error": "token expired"}` {
		t.Fatalf("after the expiry: %d %s", st, body)
	}
	c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	if clean := <-closed; !clean {
		t.Fatal("a normal closure was not clean")
	}
}
