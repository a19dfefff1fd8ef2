package zaqar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/httpclient"
	"github.com/tripleo-go/agent/collectors/keystone"
	"github.com/tripleo-go/agent/collectors/keystone/keystonetest"
	"github.com/tripleo-go/agent/internal/pyjson"
)

const password = "S3CRET-pw"

// cloud is a Keystone and a Zaqar queue "q1" on one test server.
type cloud struct {
	mu      sync.Mutex
	srv     *httptest.Server
	ks      *keystonetest.Server
	pending []posted // oldest first
	posts   int
	pops    int
	// wsRefuse makes the websocket refuse authentication; wsPost is a
	// snapshot posted (and notified) once the connection subscribed.
	wsRefuse bool
	wsPost   string
	// raw, when set, is the next HTTP pop's answer, verbatim.
	raw string
}

type posted struct {
	seq  int
	body string
}

func newCloud(t *testing.T) *cloud {
	c := &cloud{ks: keystonetest.New(password)}
	c.srv = httptest.NewServer(c)
	c.ks.BaseURL = c.srv.URL
	c.ks.SetCatalog(map[string]string{"messaging": c.srv.URL + "/zaqar", "messaging-websocket": "ws" + strings.TrimPrefix(c.srv.URL, "http") + "/ws"})
	t.Cleanup(c.srv.Close)
	return c
}

func (c *cloud) post(bodies ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range bodies {
		c.posts++
		c.pending = append(c.pending, posted{c.posts, b})
	}
}

func (c *cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.TrimSuffix(r.URL.Path, "/") == "/ws" {
		c.serveWebsocket(w, r)
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/zaqar/") {
		c.ks.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.ks.Valid(r.Header.Get("X-Auth-Token")):
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	case r.Method != http.MethodDelete || r.URL.Path != "/zaqar/v2/queues/q1/messages" || r.URL.Query().Get("pop") != "20" ||
		r.Header.Get("Client-ID") == "" || r.Header.Get("X-Project-ID") != "pid":
		http.Error(w, "bad request "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
		return
	}
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
	var msgs []string
	for _, m := range c.pending[:n] {
		// The later a message was posted, the younger it is.
		msgs = append(msgs, fmt.Sprintf(`{"id": "m%d", "age": %d, "ttl": 3600, "body": %s}`, m.seq, 1000-m.seq, m.body))
	}
	c.pending = c.pending[n:]
	fmt.Fprintf(w, `{"messages": [%s]}`, strings.Join(msgs, ", "))
}

func newCollector(t *testing.T, c *cloud, log *bytes.Buffer) *Collector {
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &Collector{
		Session: &keystone.Session{Creds: keystone.Credentials{AuthURL: c.srv.URL + "/identity/v3", UserID: "uid", ProjectID: "pid", Password: password},
			HTTP: client.Standard()},
		QueueID: "q1", Client: client, DeploymentKeys: []string{"deployments"},
		CachePath: filepath.Join(t.TempDir(), "zaqar.json"),
		Log:       slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func snapshot(v int) string {
	return fmt.Sprintf(`{"z": %d, "deployments": [{"name": "d%d", "group": "os-apply-config", "config": {"v": %d}}], "a": 0}`, v, v, v)
}

func collect(t *testing.T, col *Collector) (names []string, first string) {
	t.Helper()
	entries, err := col.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names, pyjson.Dumps(entries[0].Content)
}

// One poll takes every pending snapshot, in batches, and keeps the
// newest; the queue is then empty and the snapshot stands.
func TestNewestOfAllPending(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	for v := 1; v <= 25; v++ {
		c.post(snapshot(v))
	}
	names, doc := collect(t, col)
	if strings.Join(names, " ") != "zaqar d25" || !strings.HasPrefix(doc, `{"z": 25, "deployments"`) {
		t.Fatalf("keys %v, doc %s", names, doc)
	}
	if c.pops != 2 || len(c.pending) != 0 {
		t.Fatalf("%d pops, %d left", c.pops, len(c.pending))
	}
	names, doc = collect(t, col) // empty queue
	if strings.Join(names, " ") != "zaqar d25" || !strings.HasPrefix(doc, `{"z": 25,`) {
		t.Fatalf("after an empty pop: keys %v, doc %s", names, doc)
	}
	if strings.Contains(log.String(), password) {
		t.Fatal("the password in the log")
	}
}

// A new process facing an empty queue takes the snapshot the cache holds;
// with none, the source is unavailable and says why.
func TestEmptyQueueAfterRestart(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(log.String(), "queue q1 is empty and no earlier metadata is known") {
		t.Fatalf("err %v log %s", err, log.String())
	}
	os.WriteFile(col.CachePath, []byte(snapshot(7)), 0o600)
	col = newCollector(t, c, &log)
	os.WriteFile(col.CachePath, []byte(snapshot(7)), 0o600)
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d7" {
		t.Fatalf("keys %v", names)
	}
}

func TestRevokedTokenIsReplacedOnce(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	c.post(snapshot(1))
	collect(t, col)
	k := c.ks.Requests()
	c.ks.RevokeAll()
	c.post(snapshot(2))
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d2" || c.ks.Requests() != k+1 {
		t.Fatalf("keys %v, keystone requests %d -> %d", names, k, c.ks.Requests())
	}
}

func TestNotConfiguredWarns(t *testing.T) {
	for _, tc := range []struct {
		change func(col *Collector)
		log    string
	}{
		{func(col *Collector) { col.QueueID = "" }, "No queue_id configured."},
		{func(col *Collector) { col.Session.Creds.AuthURL = "" }, "No auth_url configured."},
		{func(col *Collector) { col.Validate, col.CAFile = true, "" }, "No CA file configured when flag ssl certificate validation is on."},
	} {
		c := newCloud(t)
		var log bytes.Buffer
		col := newCollector(t, c, &log)
		tc.change(col)
		if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotConfigured) || !strings.Contains(log.String(), "level=WARN msg=\""+tc.log) {
			t.Errorf("err %v log %s", err, log.String())
		}
	}
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *cloud, col *Collector)
		log    string
	}{
		{"no messaging endpoint", func(c *cloud, col *Collector) { c.ks.SetCatalog(map[string]string{"orchestration": "http://x"}) }, "no public messaging endpoint"},
		{"a message that is not an object", func(c *cloud, col *Collector) { c.post(`[1]`) }, "a message of queue q1 is not a JSON object"},
		{"wrong queue", func(c *cloud, col *Collector) { col.QueueID = "q2" }, "status 400"},
		{"websocket refused token", func(c *cloud, col *Collector) {
			col.UseWebsockets = true
			c.mu.Lock()
			c.wsRefuse = true
			c.mu.Unlock()
		}, "zaqar authenticate: status 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			var log bytes.Buffer
			col := newCollector(t, c, &log)
			tc.change(c, col)
			if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(log.String(), tc.log) {
				t.Fatalf("err %v log %s", err, log.String())
			}
		})
	}
}

// serveWebsocket speaks Zaqar's websocket protocol for queue q1.
func (c *cloud) serveWebsocket(w http.ResponseWriter, r *http.Request) {
	conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	var wmu sync.Mutex
	write := func(msg string) {
		wmu.Lock()
		defer wmu.Unlock()
		conn.WriteMessage(websocket.TextMessage, []byte(msg))
	}
	c.mu.Lock()
	refuse, post := c.wsRefuse, c.wsPost
	c.mu.Unlock()
	authed := false
	for {
		var req struct {
			Action  string            `json:"action"`
			Headers map[string]string `json:"headers"`
			Body    map[string]any    `json:"body"`
		}
		if err := conn.ReadJSON(&req); err != nil {
			return
		}
		reply := func(status int, body string) {
			write(fmt.Sprintf(`{"request": {"action": %q}, "headers": {"status": %d}, "body": %s}`, req.Action, status, body))
		}
		if req.Headers["Client-ID"] == "" || req.Headers["X-Project-ID"] != "pid" {
			reply(400, `{"error": "headers"}`)
			continue
		}
		switch req.Action {
		case "authenticate":
			authed = !refuse && c.ks.Valid(req.Headers["X-Auth-Token"])
			if !authed {
				reply(401, `{"error": "auth"}`)
				continue
			}
			reply(200, `{}`)
		case "queue_create", "subscription_create":
			if !authed || req.Body["queue_name"] != "q1" {
				reply(403, `{}`)
				continue
			}
			reply(201, `{}`)
			if req.Action == "subscription_create" && post != "" {
				go func() {
					time.Sleep(200 * time.Millisecond)
					write(`{"body": ` + post + `, "ttl": 3600, "queue_name": "q1", "Message_Type": "Notification"}`)
				}()
			}
		case "message_delete_many":
			c.mu.Lock()
			n := min(int(req.Body["pop"].(float64)), len(c.pending))
			var msgs []string
			for _, m := range c.pending[:n] {
				msgs = append(msgs, fmt.Sprintf(`{"id": "m%d", "age": %d, "body": %s}`, m.seq, 1000-m.seq, m.body))
			}
			c.pending = c.pending[n:]
			c.mu.Unlock()
			reply(200, `{"messages": [`+strings.Join(msgs, ", ")+`]}`)
		default:
			reply(400, `{}`)
		}
	}
}

func TestWebsocket(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	col.UseWebsockets, col.WaitTimeout = true, 2*time.Second
	for v := 1; v <= 23; v++ {
		c.post(snapshot(v))
	}
	if names, doc := collect(t, col); strings.Join(names, " ") != "zaqar d23" || !strings.HasPrefix(doc, `{"z": 23,`) {
		t.Fatalf("pending: keys %v doc %s", names, doc)
	}
	// Nothing pending: the pass waits for the next snapshot.
	c.mu.Lock()
	c.wsPost = snapshot(30)
	c.mu.Unlock()
	start := time.Now()
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d30" {
		t.Fatalf("notified: keys %v", names)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("waited %v for a snapshot sent after 200ms", took)
	}
	// Nothing at all within the wait: the last snapshot stands.
	c.mu.Lock()
	c.wsPost = ""
	c.mu.Unlock()
	col.WaitTimeout = 300 * time.Millisecond
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d30" {
		t.Fatalf("quiet: keys %v", names)
	}
}

// Real Zaqar gives fractional ages; a message that cannot be read is
// skipped with a warning, not the whole pop (whose messages are gone).
func TestMessagesReadOneByOne(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	c.raw = `{"messages": [{"age": 4.6, "body": ` + snapshot(1) + `}, {"age": "old", "body": {}}, {"age": 0.25, "body": ` + snapshot(2) + `}]}`
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d2" {
		t.Fatalf("keys %v", names)
	}
	if !strings.Contains(log.String(), "Skipping a message of queue q1") {
		t.Fatalf("log %s", log.String())
	}
}
