// Package zaqar is the "zaqar" collector: a server's metadata from a
// Zaqar queue (Heat's ZAQAR_MESSAGE transport), after Keystone v3
// authentication. Heat posts a whole metadata snapshot to the queue on
// every change; each poll pops every pending message and keeps the
// newest (the reference popped one per poll, so it needed a poll per
// snapshot to catch up). An empty queue means no change: the last
// snapshot, from this process or from the cache, stands. Over a websocket
// the pass also waits, a bounded time, for a snapshot to arrive.
package zaqar

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/httpclient"
	"github.com/tripleo-go/agent/collectors/keystone"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/pyjson"
)

// Name is the collector's name.
const Name = "zaqar"

// popBatch is how many messages one request pops (Zaqar's maximum).
const popBatch = 20

// Collector pops a queue over Zaqar's v2 HTTP API.
type Collector struct {
	Session        *keystone.Session
	QueueID        string
	Region         string
	UseWebsockets  bool
	Validate       bool   // [zaqar] ssl_certificate_validation
	CAFile         string // [zaqar] ca_file
	Client         *httpclient.Client
	DeploymentKeys []string
	// WaitTimeout bounds the websocket wait for a new snapshot when
	// none is pending (30 s when zero).
	WaitTimeout time.Duration
	// CachePath is the cache file of the last snapshot (zaqar.json).
	CachePath string
	Log       *slog.Logger

	mu       sync.Mutex
	clientID string
	last     pyjson.Value
}

// Collect pops the queue.
func (c *Collector) Collect(ctx context.Context) ([]merger.Entry, error) {
	cr := c.Session.Creds
	for _, need := range []struct{ name, value string }{
		{"auth_url", cr.AuthURL}, {"password", cr.Password.Reveal()}, {"project_id", cr.ProjectID},
		{"user_id", cr.UserID}, {"queue_id", c.QueueID},
	} {
		if need.value == "" {
			c.Log.Warn(fmt.Sprintf("No %s configured.", need.name)) // WARNING, as the reference
			return nil, collectors.ErrNotConfigured
		}
	}
	if c.Validate && c.CAFile == "" {
		c.Log.Warn("No CA file configured when flag ssl certificate validation is on.")
		return nil, collectors.ErrNotConfigured
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clientID == "" {
		c.clientID = uuid4()
	}
	pop := c.popAll
	if c.UseWebsockets {
		pop = c.popWebsocket
	}
	newest, err := pop(ctx)
	if err != nil {
		return c.unavailable(err)
	}
	if newest == nil {
		if c.last == nil {
			c.last = c.fromCache()
		}
		if c.last == nil {
			return c.unavailable(fmt.Errorf("queue %s is empty and no earlier metadata is known", c.QueueID))
		}
		c.Log.Debug("Queue empty: the last metadata stands.", "queue", c.QueueID)
		return merger.Explode(Name, c.last, c.DeploymentKeys, c.Log), nil
	}
	c.last = newest
	return merger.Explode(Name, newest, c.DeploymentKeys, c.Log), nil
}

func (c *Collector) unavailable(err error) ([]merger.Entry, error) {
	c.Log.Warn(err.Error())
	return nil, fmt.Errorf("%w: %v", collectors.ErrNotAvailable, err)
}

// message is one popped message; Body keeps its key order.
type message struct {
	Age  float64         `json:"age"` // seconds; fractional with some stores
	Body json.RawMessage `json:"body"`
}

// popAll pops batches until the queue is empty and returns the body of
// the newest message (nil if there was none).
func (c *Collector) popAll(ctx context.Context) (pyjson.Value, error) {
	if _, err := c.Session.Client(ctx); err != nil {
		return nil, err
	}
	endpoint, err := c.Session.Endpoint("messaging", c.Region)
	if err != nil {
		return nil, err
	}
	url := strings.TrimRight(endpoint, "/") + "/v2/queues/" + c.QueueID + fmt.Sprintf("/messages?pop=%d", popBatch)
	newest, err := drain(func() ([]message, error) { return c.pop(ctx, url) })
	if err != nil {
		return nil, err
	}
	if newest == nil {
		return nil, nil
	}
	doc, err := pyjson.Loads(newest.Body)
	if err != nil {
		return nil, fmt.Errorf("a message of queue %s is not JSON: %v", c.QueueID, err)
	}
	if _, ok := doc.(*pyjson.Object); !ok {
		return nil, fmt.Errorf("a message of queue %s is not a JSON object", c.QueueID)
	}
	return doc, nil
}

// drain pops batches until the queue is empty (at most 1000 snapshots
// per poll) and returns the newest message, nil if there was none.
func drain(pop func() ([]message, error)) (*message, error) {
	var newest *message
	for batch := 0; batch < 50; batch++ {
		msgs, err := pop()
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			// Equal ages: the later in the answer is the newer.
			if newest == nil || msgs[i].Age <= newest.Age {
				newest = &msgs[i]
			}
		}
		if len(msgs) < popBatch {
			break
		}
	}
	return newest, nil
}

// pop makes one pop request; a refused token is replaced once.
func (c *Collector) pop(ctx context.Context, url string) ([]message, error) {
	for attempt := 0; ; attempt++ {
		token, err := c.Session.Token(ctx)
		if err != nil {
			return nil, err
		}
		h := http.Header{"X-Auth-Token": {token}, "Client-ID": {c.clientID}, "X-Project-ID": {c.Session.Creds.ProjectID},
			"Accept": {"application/json"}}
		resp, err := c.Client.Do(ctx, http.MethodDelete, url, h)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.Status == http.StatusUnauthorized && attempt == 0:
			c.Session.Invalidate()
			continue
		case resp.Status == http.StatusNoContent || (resp.Status == http.StatusOK && len(resp.Body) == 0):
			return nil, nil
		case resp.Status != http.StatusOK:
			return nil, fmt.Errorf("DELETE %s: status %d", httpclient.Redact(url), resp.Status)
		}
		return c.decodeMessages(resp.Body)
	}
}

// decodeMessages reads a pop's answer message by message: the messages
// are consumed already, so one that cannot be read is skipped with a
// warning rather than taking the others with it.
func (c *Collector) decodeMessages(body []byte) ([]message, error) {
	var answer struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if len(body) == 0 || string(body) == `""` {
		return nil, nil
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("the answer of queue %s is not JSON: %v", c.QueueID, err)
	}
	out := make([]message, 0, len(answer.Messages))
	for _, raw := range answer.Messages {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			c.Log.Warn(fmt.Sprintf("Skipping a message of queue %s: %v", c.QueueID, err))
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// fromCache reads the last snapshot this node stored (zaqar.json).
func (c *Collector) fromCache() pyjson.Value {
	if c.CachePath == "" {
		return nil
	}
	data, err := os.ReadFile(c.CachePath)
	if err != nil {
		return nil
	}
	doc, err := pyjson.Loads(data)
	if err != nil {
		return nil
	}
	if _, ok := doc.(*pyjson.Object); !ok {
		return nil
	}
	return doc
}

func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
