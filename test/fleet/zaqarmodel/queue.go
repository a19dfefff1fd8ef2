package zaqarmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// queue is one node's queue: its pending messages, oldest first, and the
// sockets subscribed to it. Each has its own lock: a change posts to
// thousands while their nodes pop.
type queue struct {
	mu      sync.Mutex
	seq     int
	pending []message
	subs    map[*func(string)]bool
}

type message struct {
	seq    int
	body   string
	posted time.Time
}

// post queues body and pushes it to the subscribed sockets (zaqarws
// hands it to a socket's writer without waiting for it).
func (q *queue) post(body string, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	q.pending = append(q.pending, message{seq: q.seq, body: body, posted: at})
	for push := range q.subs {
		(*push)(body)
	}
}

// items are up to n pending messages as a listing or a pop shows them;
// take removes them.
func (q *queue) items(n int, take bool) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = max(min(n, len(q.pending)), 0)
	now := time.Now()
	out := make([]string, 0, n)
	for _, m := range q.pending[:n] {
		out = append(out, fmt.Sprintf(`{"id": "m%d", "age": %d, "ttl": 3600, "body": %s}`, m.seq, int(now.Sub(m.posted).Seconds()), m.body))
	}
	if take {
		q.pending = q.pending[n:]
	}
	return out
}

func (q *queue) subscribe(push func(string)) func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.subs == nil {
		q.subs = map[*func(string)]bool{}
	}
	key := &push
	q.subs[key] = true
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		delete(q.subs, key)
	}
}

// backend is the model's queues for zaqarws.
type backend struct{ c *Cloud }

func (b backend) Authenticate(token string) bool { return b.c.KS.Valid(token) }
func (b backend) HasQueue(name string) bool      { return b.c.queues[name] != nil }
func (b backend) Pop(name string, n int) []string {
	return b.c.queues[name].items(n, true)
}
func (b backend) List(name string, n int) []string {
	return b.c.queues[name].items(n, false)
}
func (b backend) Subscribe(name string, push func(string)) func() {
	return b.c.queues[name].subscribe(push)
}

// serveZaqar is Zaqar's HTTP API for the queues: a listing (GET, API v2),
// a pop (DELETE ?pop=N, API v2) and a post (POST, API v1.1).
func (c *Cloud) serveZaqar(w http.ResponseWriter, r *http.Request, now time.Time) {
	kind := r.Method
	if r.Method == http.MethodDelete && r.URL.Query().Has("pop") {
		kind = "pop"
	}
	c.request("zaqar", kind, now)
	if !c.KS.Valid(r.Header.Get("X-Auth-Token")) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Client-ID") == "" || r.Header.Get("X-Project-ID") != ProjectID {
		http.Error(w, "bad headers", http.StatusBadRequest)
		return
	}
	version, name, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/zaqar/"), "/queues/")
	name, rest, _ := strings.Cut(name, "/")
	q := c.queues[name]
	if !ok || q == nil || rest != "messages" {
		http.Error(w, "no such queue", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case version == "v2" && r.Method == http.MethodGet:
		n := 10
		fmt.Sscan(r.URL.Query().Get("limit"), &n)
		fmt.Fprintf(w, `{"messages": [%s], "links": []}`, strings.Join(q.items(n, false), ", "))
	case version == "v2" && kind == "pop":
		var n int
		fmt.Sscan(r.URL.Query().Get("pop"), &n)
		msgs := q.items(n, true)
		if len(msgs) == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Fprintf(w, `{"messages": [%s]}`, strings.Join(msgs, ", "))
	case version == "v1.1" && r.Method == http.MethodPost:
		var req struct {
			Messages []struct {
				Body json.RawMessage `json:"body"`
			} `json:"messages"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		for _, m := range req.Messages {
			q.post(string(m.Body), now)
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"resources": []}`)
	default:
		http.Error(w, "bad request", http.StatusBadRequest)
	}
}
