// Package zaqarmodel is a loopback model of the undercloud as a node with
// Heat's ZAQAR_MESSAGE transport sees it, for fleets larger than the real
// services on this machine carry: Keystone v3 (internal/testkit/
// keystonetest: one user and project, tokens kept an hour) and a Zaqar
// queue per node, over HTTP (API v2 listing and pop, v1.1 post) and over
// a websocket (internal/testkit/zaqarws: the real Zaqar's protocol, each
// message posted pushed to the queue's subscribed socket). A change posts
// the document's next version to every queue, as Heat posts a server's
// metadata to its queue. It counts requests by service and kind, bytes on
// the wire, and websocket frames apart from requests (a socket's actions
// are requests, as Zaqar serves each; pings, pongs and pushes are
// frames only); it can answer late (Latency) or be down (Outage: every
// request held or refused, every socket dropped, as a restart does).
package zaqarmodel

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqarws"
	"github.com/tripleo-go/agent/test/fleet/model"
	"github.com/tripleo-go/agent/test/fleet/stats"
)

// The credentials every node of the model authenticates with.
const (
	UserID    = "uid"
	ProjectID = "pid"
	Password  = "fleet-password"
)

// QueueName is node i's queue.
func QueueName(i int) string { return fmt.Sprintf("fleet-%05d", i) }

// Options configure a model.
type Options struct {
	// Queues is how many nodes, each with its queue (QueueName).
	Queues int
	// DocBytes is the document's size (model.Document).
	DocBytes int
	// Latency delays every HTTP answer.
	Latency time.Duration
	// Bucket is the width of the timelines' buckets (a second when zero).
	Bucket time.Duration
}

// Cloud is the model. Use New.
type Cloud struct {
	opts  Options
	start time.Time
	KS    *keystonetest.Server
	ws    *zaqarws.Server

	queues map[string]*queue

	mu      sync.Mutex
	version int
	changes []time.Time
	outage  string
	recover chan struct{} // closed when a hung outage ends
	delays  [][]float64   // per change: its pushes' delays, seconds

	requests, bytesIn, bytesOut, frames, pushes *stats.Timeline
	kinds, services, frameKinds                 sync.Map // name -> *atomic.Int64
}

// New is a model whose every queue holds version 0 of the document (a
// stack just created); its timelines count from start.
func New(o Options, start time.Time) *Cloud {
	if o.Bucket <= 0 {
		o.Bucket = time.Second
	}
	c := &Cloud{opts: o, start: start, KS: keystonetest.New(Password), queues: map[string]*queue{},
		requests: stats.NewTimeline(start, o.Bucket), bytesIn: stats.NewTimeline(start, o.Bucket),
		bytesOut: stats.NewTimeline(start, o.Bucket), frames: stats.NewTimeline(start, o.Bucket),
		pushes: stats.NewTimeline(start, o.Bucket)}
	// The run is shorter than the token's hour: a node authenticates once.
	c.KS.UserID, c.KS.ProjectID = UserID, ProjectID
	for i := 0; i < o.Queues; i++ {
		c.queues[QueueName(i)] = &queue{}
	}
	c.ws = &zaqarws.Server{Backend: backend{c}, ProjectID: ProjectID,
		// Thousands of sockets: small read buffers of their own, and write
		// buffers lent from a pool for the length of a write, as large as
		// a push, so that a push is one frame and one write as Zaqar sends
		// it (with a socket's own 1 KiB buffer, 8 fragments and 8 writes).
		Upgrader: &websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: o.DocBytes + 1024,
			WriteBufferPool: &sync.Pool{}},
		OnFrame: c.frame}
	c.post(model.Document(0, o.DocBytes))
	return c
}

func (c *Cloud) post(doc []byte) {
	body := string(doc)
	now := time.Now()
	for _, q := range c.queues {
		q.post(body, now)
	}
}

func count(m *sync.Map, kind string) {
	n, _ := m.LoadOrStore(kind, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

// request counts one request to service.
func (c *Cloud) request(service, kind string, at time.Time) {
	c.requests.Add(at, 1)
	count(&c.services, service)
	count(&c.kinds, service+" "+kind)
}

// frame counts one websocket frame; a client's action is a request too.
func (c *Cloud) frame(in bool, kind string, _ int) {
	now := time.Now()
	c.frames.Add(now, 1)
	dir := "out "
	if in {
		dir = "in "
		if kind != "ping" && kind != "pong" {
			c.request("zaqar-ws", kind, now)
		}
	}
	if kind == "notification" {
		c.pushes.Add(now, 1)
		c.mu.Lock()
		if k := len(c.changes); k > 0 {
			c.delays[k-1] = append(c.delays[k-1], now.Sub(c.changes[k-1]).Seconds())
		}
		c.mu.Unlock()
	}
	count(&c.frameKinds, dir+kind)
}

// Change posts the document's next version to every queue; it returns
// the version and when the posting began.
func (c *Cloud) Change() (int, time.Time) {
	c.mu.Lock()
	now := time.Now()
	c.version++
	v := c.version
	c.changes = append(c.changes, now)
	c.delays = append(c.delays, nil)
	c.mu.Unlock()
	c.post(model.Document(v, c.opts.DocBytes))
	return v, now
}

// Outage starts an outage of the mode (model.Hang or model.Unavailable;
// "" ends it). Either drops every socket.
func (c *Cloud) Outage(mode string) error {
	if mode != "" && mode != model.Unavailable && mode != model.Hang {
		return fmt.Errorf("unknown outage mode %q", mode)
	}
	c.mu.Lock()
	if c.recover != nil && mode == "" {
		close(c.recover)
		c.recover = nil
	}
	if mode == model.Hang && c.recover == nil {
		c.recover = make(chan struct{})
	}
	c.outage = mode
	c.mu.Unlock()
	if mode != "" {
		c.ws.CloseAll()
	}
	return nil
}

// Open is how many sockets are open.
func (c *Cloud) Open() int { return c.ws.Open() }

// Stats is what was counted so far.
func (c *Cloud) Stats() model.Stats {
	s := model.Stats{Start: c.start, Bucket: c.opts.Bucket, Requests: c.requests.Sums(), BytesIn: c.bytesIn.Sums(),
		BytesOut: c.bytesOut.Sums(), Frames: c.frames.Sums(), Pushes: c.pushes.Sums(),
		Kinds: load(&c.kinds), Services: load(&c.services), FrameKinds: load(&c.frameKinds)}
	c.mu.Lock()
	s.Changes = append(s.Changes, c.changes...)
	for _, d := range c.delays {
		s.PushDelays = append(s.PushDelays, slices.Clone(d))
	}
	c.mu.Unlock()
	return s
}

func load(m *sync.Map) map[string]int64 {
	out := map[string]int64{}
	m.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// AuthURL is Keystone's v3 URL at base (the server's http://host:port).
func AuthURL(base string) string { return base + "/identity/v3" }

// Serve serves the model on ln until ctx ends.
func (c *Cloud) Serve(ctx context.Context, ln net.Listener) error {
	base := "http://" + ln.Addr().String()
	c.KS.BaseURL = base
	c.KS.SetCatalog(map[string]string{"messaging": base + "/zaqar", "messaging-websocket": "ws://" + ln.Addr().String() + "/ws"})
	srv := &http.Server{Handler: c, ReadHeaderTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		srv.Close()
		c.ws.CloseAll()
	}()
	err := srv.Serve(model.CountBytes(ln, c.bytesIn, c.bytesOut))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ServeHTTP routes a request to Keystone, Zaqar's HTTP API or its
// websocket, after the outage and the latency.
func (c *Cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	service := "zaqar"
	switch {
	case strings.HasPrefix(r.URL.Path, "/identity"):
		service = "keystone"
	case strings.TrimSuffix(r.URL.Path, "/") == "/ws":
		service = "zaqar-ws"
	}
	c.mu.Lock()
	outage, recover := c.outage, c.recover
	c.mu.Unlock()
	switch outage {
	case model.Unavailable:
		c.request(service, r.Method+" 503", now)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	case model.Hang:
		select {
		case <-recover:
		case <-r.Context().Done():
			c.request(service, r.Method+" abandoned", now)
			return
		}
	}
	if c.opts.Latency > 0 && service != "zaqar-ws" {
		select {
		case <-time.After(c.opts.Latency):
		case <-r.Context().Done():
			return
		}
	}
	switch service {
	case "keystone":
		c.request(service, r.Method+" "+strings.TrimPrefix(r.URL.Path, "/identity"), now)
		c.KS.ServeHTTP(w, r)
	case "zaqar-ws":
		c.request(service, "upgrade", now)
		c.ws.ServeHTTP(w, r)
	default:
		c.serveZaqar(w, r, now)
	}
}
