package fleet

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// Wire counts the bytes this process's HTTP connections send and receive,
// by the server's port: what our agents cost the network. It hooks
// net/http's default transport, which the agents' clients are cloned
// from (internal/httpclient), so it must be installed before the agents
// start.
type Wire struct {
	mu       sync.Mutex
	sent     map[string]*atomic.Int64
	received map[string]*atomic.Int64
}

// CountWire installs the counting on http.DefaultTransport.
func CountWire() *Wire {
	w := &Wire{sent: map[string]*atomic.Int64{}, received: map[string]*atomic.Int64{}}
	t := http.DefaultTransport.(*http.Transport)
	dial := t.DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		_, port, _ := net.SplitHostPort(addr)
		return &countedConn{Conn: c, sent: w.counter(w.sent, port), received: w.counter(w.received, port)}, nil
	}
	return w
}

func (w *Wire) counter(m map[string]*atomic.Int64, port string) *atomic.Int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if m[port] == nil {
		m[port] = new(atomic.Int64)
	}
	return m[port]
}

// Counts is the bytes sent and received so far, by port.
func (w *Wire) Counts() (sent, received map[string]float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sent, received = map[string]float64{}, map[string]float64{}
	for p, c := range w.sent {
		sent[p] = float64(c.Load())
	}
	for p, c := range w.received {
		received[p] = float64(c.Load())
	}
	return sent, received
}

type countedConn struct {
	net.Conn
	sent, received *atomic.Int64
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.received.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.sent.Add(int64(n))
	return n, err
}
