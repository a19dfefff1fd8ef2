package zaqartest

// The websocket: zaqarws speaks Zaqar's protocol (the fleet's model
// speaks it too), the cloud holds the queue, the counts and the faults.

import (
	"time"

	"github.com/tripleo-go/agent/internal/testkit/zaqarws"
)

// Requests is how many Zaqar API requests were answered, HTTP and
// websocket (Keystone's and pings apart).
func (c *Cloud) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.pops + c.lists + len(c.posted)
	for _, k := range c.actions {
		n += k
	}
	return n
}

// Actions is how many websocket requests of each action were answered.
func (c *Cloud) Actions() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for a, n := range c.actions {
		out[a] = n
	}
	return out
}

// Pings is how many websocket pings were answered.
func (c *Cloud) Pings() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pings
}

// CleanCloses is how many websockets the client closed with a close
// frame (normal closure).
func (c *Cloud) CleanCloses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cleanCloses
}

// Subscribers is how many websockets are subscribed now.
func (c *Cloud) Subscribers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// DropSockets closes every open websocket without a close frame, as a
// server that died or a network that broke would.
func (c *Cloud) DropSockets() { c.websocket().CloseAll() }

// RefuseSubscriptions makes subscription_create answer 503 (true), as
// a Zaqar whose notifications are down would.
func (c *Cloud) RefuseSubscriptions(refuse bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subRefuse = refuse
}

// IgnorePings leaves websocket pings unanswered (true), as a peer that
// is gone without a word does.
func (c *Cloud) IgnorePings(ignore bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ignorePings = ignore
}

// flag reads a fault under the cloud's lock.
func (c *Cloud) flag(f *bool) func() bool {
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return *f
	}
}

func (c *Cloud) websocket() *zaqarws.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ws != nil {
		return c.ws
	}
	c.ws = &zaqarws.Server{Backend: cloudBackend{c}, ProjectID: c.KS.ProjectID,
		Refuse: c.flag(&c.wsRefuse), IgnorePings: c.flag(&c.ignorePings), RefuseSubscriptions: c.flag(&c.subRefuse),
		OnRequest: func(action string) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.actions == nil {
				c.actions = map[string]int{}
			}
			c.actions[action]++
		},
		OnFrame: func(in bool, kind string, _ int) {
			if in && kind == "ping" {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.pings++
			}
		},
		OnClosed: func(clean bool) {
			if clean {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.cleanCloses++
			}
		},
		OnSubscribed: func(push func(string)) {
			c.mu.Lock()
			post := c.wsPost
			c.mu.Unlock()
			if post != "" {
				time.Sleep(200 * time.Millisecond)
				push(post)
			}
		}}
	return c.ws
}

// cloudBackend is the cloud's one queue for zaqarws.
type cloudBackend struct{ c *Cloud }

func (b cloudBackend) Authenticate(token string) bool { return b.c.KS.Valid(token) }
func (b cloudBackend) HasQueue(name string) bool      { return name == b.c.Queue }

func (b cloudBackend) Pop(_ string, n int) []string {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	return b.c.popLocked(min(n, len(b.c.pending)))
}

func (b cloudBackend) List(_ string, n int) []string {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	var out []string
	for _, m := range b.c.pending[:min(n, len(b.c.pending))] {
		out = append(out, item(m))
	}
	return out
}

func (b cloudBackend) Subscribe(_ string, push func(string)) func() {
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	if b.c.subs == nil {
		b.c.subs = map[*func(string)]bool{}
	}
	key := &push
	b.c.subs[key] = true
	return func() {
		b.c.mu.Lock()
		defer b.c.mu.Unlock()
		delete(b.c.subs, key)
	}
}
