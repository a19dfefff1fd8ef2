// Package zaqartest is a Keystone and a Zaqar on one test server, for
// unit tests of what talks to Zaqar (the zaqar collector, a signal): one
// queue of project "pid", popped over HTTP (API v2) or a websocket,
// posted to over HTTP (API v1.1), with counts and faults to inject. As
// Zaqar does, a message posted is also sent to the websockets subscribed
// to the queue (websocket.go), which tests can drop.
package zaqartest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqarws"
)

// Cloud serves Keystone under /identity/, Zaqar's HTTP API under /zaqar/
// and its websocket at /ws.
type Cloud struct {
	Srv   *httptest.Server
	KS    *keystonetest.Server
	Queue string

	mu      sync.Mutex
	pending []posted // oldest first
	posts   int
	pops    int
	lists   int
	// listFails, when set, is the status every listing answers.
	listFails int
	posted    []Posted
	// wsRefuse makes the websocket refuse authentication; wsPost is a
	// message posted (and notified) once the connection subscribed.
	wsRefuse bool
	wsPost   string
	// raw, when set, is the next HTTP pop's answer, verbatim.
	raw string
	// subs push to the subscribed websockets, ws serves them
	// (websocket.go); actions counts the websocket requests by action,
	// pings the pings answered, cleanCloses the sockets closed cleanly;
	// ignorePings leaves pings unanswered, subRefuse refuses
	// subscriptions.
	subs        map[*func(string)]bool
	ws          *zaqarws.Server
	actions     map[string]int
	pings       int
	ignorePings bool
	subRefuse   bool
	cleanCloses int
}

type posted struct {
	seq  int
	body string
}

// Posted is a message posted through the HTTP API.
type Posted struct {
	ClientID string
	Body     json.RawMessage
	TTL      int
}

// New starts a cloud whose queue is queue and whose user's password is
// password; Close stops it.
func New(queue, password string) *Cloud {
	c := &Cloud{KS: keystonetest.New(password), Queue: queue}
	c.Srv = httptest.NewServer(c)
	c.KS.BaseURL = c.Srv.URL
	c.KS.SetCatalog(map[string]string{"messaging": c.Srv.URL + "/zaqar", "messaging-websocket": "ws" + strings.TrimPrefix(c.Srv.URL, "http") + "/ws"})
	return c
}

// Close stops the server.
func (c *Cloud) Close() { c.Srv.Close() }

// AuthURL is Keystone's v3 URL.
func (c *Cloud) AuthURL() string { return c.Srv.URL + "/identity/v3" }

// Post queues message bodies (JSON documents), oldest first.
func (c *Cloud) Post(bodies ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bodies {
		c.posts++
		c.pending = append(c.pending, posted{c.posts, b})
		c.notifyLocked(b)
	}
}

// notifyLocked hands body to every subscribed websocket (zaqarws
// drops it for one that is behind, as for a subscriber that is gone).
func (c *Cloud) notifyLocked(body string) {
	for push := range c.subs {
		(*push)(body)
	}
}

// Notify pushes body to every subscribed websocket without queuing it:
// a notification that arrives late, after its message was read.
func (c *Cloud) Notify(body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notifyLocked(body)
}

// Pops is how many HTTP pop requests were answered.
func (c *Cloud) Pops() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pops
}

// Lists is how many HTTP listings of the queue were answered.
func (c *Cloud) Lists() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists
}

// FailLists makes every listing answer status (0: answer normally).
func (c *Cloud) FailLists(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listFails = status
}

// Pending is how many messages wait in the queue.
func (c *Cloud) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Posted is what was posted through the HTTP API.
func (c *Cloud) Posted() []Posted {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Posted(nil), c.posted...)
}

// AnswerNextPop makes the next HTTP pop answer body verbatim.
func (c *Cloud) AnswerNextPop(body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.raw = body
}

// RefuseWebsocket makes the websocket refuse authentication.
func (c *Cloud) RefuseWebsocket() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wsRefuse = true
}

// NotifyOnSubscribe makes the websocket send body as a notification
// 200 ms after a connection subscribed ("": none).
func (c *Cloud) NotifyOnSubscribe(body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wsPost = body
}

func (c *Cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSuffix(r.URL.Path, "/") == "/ws" {
		c.websocket().ServeHTTP(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/zaqar/") {
		c.KS.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.KS.Valid(r.Header.Get("X-Auth-Token")) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Header.Get("Client-ID") == "" || r.Header.Get("X-Project-ID") != c.KS.ProjectID {
		http.Error(w, "bad headers", http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodDelete && r.URL.Path == "/zaqar/v2/queues/"+c.Queue+"/messages" && r.URL.Query().Get("pop") == "20":
		c.servePop(w)
	case r.Method == http.MethodGet && r.URL.Path == "/zaqar/v2/queues/"+c.Queue+"/messages":
		c.serveList(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/zaqar/v1.1/queues/"+c.Queue+"/messages":
		c.servePost(w, r)
	default:
		http.Error(w, "bad request "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
	}
}

func (c *Cloud) servePop(w http.ResponseWriter) {
	c.pops++
	if c.raw != "" {
		fmt.Fprint(w, c.raw)
		c.raw = ""
		return
	}
	n := min(20, len(c.pending))
	if n == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"messages": [%s]}`, strings.Join(c.popLocked(n), ", "))
}

// serveList answers a listing as Zaqar's API v2 does: 200 and the
// messages, none when the queue is empty. An answer set for the next
// pop counts as a message.
func (c *Cloud) serveList(w http.ResponseWriter, r *http.Request) {
	c.lists++
	if c.listFails != 0 {
		http.Error(w, "listing refused", c.listFails)
		return
	}
	var msgs []string
	if c.raw != "" || len(c.pending) > 0 {
		msgs = append(msgs, `{"id": "m0", "age": 1, "ttl": 3600, "body": {}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"messages": [%s], "links": []}`, strings.Join(msgs, ", "))
}

// popLocked takes n pending messages and returns them as a JSON list's
// items.
func (c *Cloud) popLocked(n int) []string {
	var msgs []string
	for _, m := range c.pending[:n] {
		msgs = append(msgs, item(m))
	}
	c.pending = c.pending[n:]
	return msgs
}

// item is m as a listing or a pop shows it; the later a message was
// posted, the younger it is.
func item(m posted) string {
	return fmt.Sprintf(`{"id": "m%d", "age": %d, "ttl": 3600, "body": %s}`, m.seq, 1000-m.seq, m.body)
}

func (c *Cloud) servePost(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Body json.RawMessage `json:"body"`
			TTL  int             `json:"ttl"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var ids []string
	for _, m := range req.Messages {
		c.posted = append(c.posted, Posted{ClientID: r.Header.Get("Client-ID"), Body: m.Body, TTL: m.TTL})
		c.posts++
		c.pending = append(c.pending, posted{c.posts, string(m.Body)})
		c.notifyLocked(string(m.Body))
		ids = append(ids, fmt.Sprintf(`"/v1.1/queues/%s/messages/m%d"`, c.Queue, c.posts))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"resources": [%s]}`, strings.Join(ids, ", "))
}
