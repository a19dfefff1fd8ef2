// Package model is a loopback model of a node's metadata endpoint (a Swift
// object behind a TempURL, as Heat's POLL_TEMP_URL transport serves it) for
// fleets larger than the real services on this machine can carry. It
// answers GET and HEAD with an ETag and a Last-Modified, and conditional
// GETs with 304; it counts requests by kind and by second, and bytes in
// and out on the wire (HTTP headers included); the document changes when
// asked; it can answer late (Latency) or be down for a while (Outage).
package model

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tripleo-go/agent/test/fleet/stats"
)

// Outage modes.
const (
	// Unavailable answers 503 at once.
	Unavailable = "503"
	// Hang holds every request until the outage ends, then answers it:
	// the worst case for a fleet's phases (an API behind a load balancer
	// whose back end restarts).
	Hang = "hang"
)

// Options configure an endpoint.
type Options struct {
	// DocBytes is the document's size (at least what its fields need).
	DocBytes int
	// Latency delays every answer.
	Latency time.Duration
	// Bucket is the width of the timelines' buckets (a second when zero).
	Bucket time.Duration
}

// Endpoint is the model. Its zero value is not usable: use New.
type Endpoint struct {
	opts  Options
	start time.Time

	mu       sync.Mutex
	version  int
	doc      []byte
	etag     string
	modified time.Time
	changes  []time.Time // when each version from 1 on was published
	outage   string
	recover  chan struct{} // closed when the outage ends

	requests *stats.Timeline
	kinds    sync.Map // kind -> *atomic.Int64
	bytesIn  *stats.Timeline
	bytesOut *stats.Timeline
}

// New is an endpoint serving version 0 of its document; its timelines
// count from start.
func New(o Options, start time.Time) *Endpoint {
	if o.Bucket <= 0 {
		o.Bucket = time.Second
	}
	e := &Endpoint{opts: o, start: start, requests: stats.NewTimeline(start, o.Bucket),
		bytesIn: stats.NewTimeline(start, o.Bucket), bytesOut: stats.NewTimeline(start, o.Bucket)}
	e.publish(start)
	return e
}

// Document is version v of the document: a server's metadata with a
// marker the simulated command reads (Version) and padding to size.
func Document(v, size int) []byte {
	head := fmt.Sprintf(`{"fleetsim": {"version": %d}, "padding": "`, v)
	tail := `"}`
	pad := max(size-len(head)-len(tail), 0)
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// Version reads the marker of Document back from the bytes of a file
// that holds one (as the cache writes it); -1 when there is none.
func Version(b []byte) int {
	m := versionRE.FindSubmatch(b[:min(len(b), 512)])
	if m == nil {
		return -1
	}
	v, err := strconv.Atoi(string(m[1]))
	if err != nil {
		return -1
	}
	return v
}

// versionRE finds the marker however the cache indents it.
var versionRE = regexp.MustCompile(`"fleetsim":\s*\{\s*"version":\s*([0-9]+)`)

func (e *Endpoint) publish(at time.Time) {
	e.doc = Document(e.version, e.opts.DocBytes)
	e.etag = fmt.Sprintf(`"fleetsim-%d"`, e.version)
	e.modified = at
}

// Change publishes the next version of the document and returns it with
// the time it was published.
func (e *Endpoint) Change() (int, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	e.version++
	e.changes = append(e.changes, now)
	e.publish(now)
	return e.version, now
}

// Outage starts an outage of the mode ("" ends it).
func (e *Endpoint) Outage(mode string) error {
	if mode != "" && mode != Unavailable && mode != Hang {
		return fmt.Errorf("unknown outage mode %q", mode)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recover != nil && mode == "" {
		close(e.recover)
		e.recover = nil
	}
	if mode == Hang && e.recover == nil {
		e.recover = make(chan struct{})
	}
	e.outage = mode
	return nil
}

func (e *Endpoint) count(kind string, at time.Time) {
	e.requests.Add(at, 1)
	c, _ := e.kinds.LoadOrStore(kind, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

// ServeHTTP answers a request for the document.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	e.mu.Lock()
	outage, recover := e.outage, e.recover
	e.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		e.count(r.Method+" 405", now)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch outage {
	case Unavailable:
		e.count(r.Method+" 503", now)
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return
	case Hang:
		select {
		case <-recover:
		case <-r.Context().Done():
			e.count(r.Method+" abandoned", now)
			return
		}
	}
	if e.opts.Latency > 0 {
		select {
		case <-time.After(e.opts.Latency):
		case <-r.Context().Done():
			return
		}
	}
	e.mu.Lock()
	doc, etag, modified := e.doc, e.etag, e.modified
	e.mu.Unlock()
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	h.Set("Content-Type", "application/json")
	if notModified(r, etag, modified) {
		e.count(r.Method+" 304", now)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	e.count(r.Method+" 200", now)
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	if r.Method == http.MethodGet {
		w.Write(doc)
	}
}

// notModified applies If-None-Match first, else If-Modified-Since (whose
// resolution is a second), as RFC 9110 says.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			if t = strings.TrimSpace(t); t == etag || t == "*" {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil {
			return !modified.Truncate(time.Second).After(t)
		}
	}
	return false
}

// Stats is what the endpoint counted.
type Stats struct {
	Start  time.Time
	Bucket time.Duration
	// Requests, BytesIn and BytesOut are per bucket from Start.
	Requests, BytesIn, BytesOut []float64
	// Kinds counts requests by method and answer ("GET 304").
	Kinds map[string]int64
	// Changes are the times of versions 1, 2, ...
	Changes []time.Time
	// Services counts requests by service (the Zaqar model's: keystone,
	// zaqar over HTTP, zaqar-ws: a socket's upgrade and its requests).
	Services map[string]int64 `json:",omitempty"`
	// Frames is websocket frames per bucket, both ways, pings and
	// pushes included; FrameKinds counts them by direction and kind
	// ("in ping", "out notification").
	Frames []float64 `json:",omitempty"`
	// Pushes is the notifications written per bucket (in Frames too);
	// PushDelays, for each change, how long after it each notification
	// was written, seconds: the undercloud's share of change -> command.
	Pushes     []float64        `json:",omitempty"`
	PushDelays [][]float64      `json:",omitempty"`
	FrameKinds map[string]int64 `json:",omitempty"`
}

// Stats is what was counted so far.
func (e *Endpoint) Stats() Stats {
	s := Stats{Start: e.start, Bucket: e.opts.Bucket, Requests: e.requests.Sums(), BytesIn: e.bytesIn.Sums(), BytesOut: e.bytesOut.Sums(), Kinds: map[string]int64{}}
	e.kinds.Range(func(k, v any) bool {
		s.Kinds[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	e.mu.Lock()
	s.Changes = append(s.Changes, e.changes...)
	e.mu.Unlock()
	return s
}

// Serve serves the endpoint on ln until ctx ends, counting the bytes of
// every connection.
func (e *Endpoint) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: e, ReadHeaderTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	err := srv.Serve(CountBytes(ln, e.bytesIn, e.bytesOut))
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// CountBytes counts the bytes every connection ln accepts reads (in)
// and writes (out), HTTP headers and websocket frames included.
func CountBytes(ln net.Listener, in, out *stats.Timeline) net.Listener {
	return countingListener{Listener: ln, in: in, out: out}
}

type countingListener struct {
	net.Listener
	in, out *stats.Timeline
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, in: l.in, out: l.out}, nil
}

type countingConn struct {
	net.Conn
	in, out *stats.Timeline
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.in.Add(time.Now(), float64(n))
	}
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if n > 0 {
		c.out.Add(time.Now(), float64(n))
	}
	return n, err
}
