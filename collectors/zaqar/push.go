package zaqar

// Push: in the daemon, with use_websockets, the collector keeps one
// websocket open and subscribed to its queue, and Zaqar pushes each
// message posted to it. A pushed message wakes a pass, which pops the
// queue over that socket; while the subscription holds, a pass nothing
// was pushed for reads nothing, but for a re-read every SafetyRead in
// case a notification went astray. When the socket drops, every pass
// reads the queue again (polling), and the subscription is retried with
// exponential backoff and full jitter.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
)

const (
	// DefaultSafetyRead: 6 listings an idle hour, about 2% of the 268
	// requests an hour that polling costs the undercloud (docs/scale.md),
	// and a notification lost in Zaqar costs at most 10 minutes.
	DefaultSafetyRead = 10 * time.Minute
	// DefaultSubscriptionTTL is the subscription's lifetime in Zaqar; the
	// collector replaces it at three quarters of it, so one idle hour
	// costs 1.3 re-subscriptions of 3 requests each.
	DefaultSubscriptionTTL = time.Hour
	// firstBackoff is the first retry's ceiling; it doubles per failure
	// up to Push.Backoff.
	firstBackoff = time.Second
)

// pushState is the subscription as a pass sees it.
type pushState struct {
	listening bool // Listen runs: a pass does not wait on a socket of its own
	sub       *zaqar.Subscription
	dirty     bool // a message was pushed since the last read
	// pushed is the newest pushed message's body since the last read.
	// It stands when the read finds the queue empty: Zaqar notifies
	// before a Swift-backed queue lists the message (seen on the lab),
	// as the per-pass socket's wait always took the notification.
	pushed   json.RawMessage
	lastRead time.Time // the last read over the subscription
}

// Listen implements collectors.Pusher: only with use_websockets.
func (c *Collector) Listen(ctx context.Context, p collectors.Push) {
	if !c.UseWebsockets {
		return
	}
	c.pmu.Lock()
	c.push.listening = true
	c.pmu.Unlock()
	defer func() {
		c.pmu.Lock()
		c.push = pushState{}
		c.pmu.Unlock()
	}()
	notify := func(body json.RawMessage) {
		c.pmu.Lock()
		c.push.dirty = true
		if len(body) > 0 && string(body) != "null" {
			c.push.pushed = body
		}
		c.pmu.Unlock()
		p.Wake()
	}
	for failures := 0; ; {
		sub, err := c.Queue.Subscribe(ctx, c.ttl(), notify)
		if err == nil {
			failures = 0
			c.Log.Info("Subscribed to Zaqar queue: changes are pushed.", "queue", c.Queue.Name)
			c.setSub(sub, true) // a pass reads what came while no one listened
			// Reads go over the socket now: the polling's idle HTTP
			// connection would hold a socket on Zaqar for nothing.
			c.Queue.Client.CloseIdleConnections()
			p.Wake()
			sub, err = c.hold(ctx, sub, notify, p)
			c.setSub(nil, false)
			sub.Close()
			if ctx.Err() != nil {
				return
			}
			c.Log.Warn("Zaqar push lost; polling until it is back: "+err.Error(), "queue", c.Queue.Name)
			p.Wake()
		} else if ctx.Err() != nil {
			return
		} else {
			c.Log.Warn("Cannot subscribe to Zaqar queue; polling: "+err.Error(), "queue", c.Queue.Name)
		}
		failures++
		select {
		case <-ctx.Done():
			return
		case <-p.After(Backoff(failures, p.Backoff, p.Rand)):
		}
	}
}

// Backoff is the wait before retry n (1, 2, ...): full jitter, a random
// part of a ceiling that doubles from a second up to limit.
func Backoff(n int, limit time.Duration, rand func() float64) time.Duration {
	ceiling := firstBackoff
	for i := 1; i < n && ceiling < limit; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, max(limit, firstBackoff))
	return time.Duration(rand() * float64(ceiling))
}

// hold keeps sub until ctx ends (nil) or the socket drops (its error),
// replacing it with a fresh subscription before its ttl runs out: a new
// one first, then the old one closed, so no message falls between. It
// returns the subscription it holds last.
func (c *Collector) hold(ctx context.Context, sub *zaqar.Subscription, notify func(json.RawMessage), p collectors.Push) (*zaqar.Subscription, error) {
	for {
		select {
		case <-ctx.Done():
			return sub, nil
		case <-sub.Done():
			return sub, sub.Err()
		case <-p.After(c.ttl() * 3 / 4):
			fresh, err := c.Queue.Subscribe(ctx, c.ttl(), notify)
			if err != nil {
				return sub, err
			}
			c.setSub(fresh, false)
			sub.Close()
			sub = fresh
		}
	}
}

func (c *Collector) ttl() time.Duration {
	if c.SubscriptionTTL > 0 {
		return c.SubscriptionTTL
	}
	return DefaultSubscriptionTTL
}

// setSub sets the subscription; with catchUp the next pass reads the
// queue, listing it first: what came while no one listened, if anything
// (a fleet that subscribes again after an outage then claims nothing).
func (c *Collector) setSub(sub *zaqar.Subscription, catchUp bool) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.push.sub = sub
	if catchUp {
		c.push.lastRead = time.Time{}
	}
}

// Subscribed says whether a subscription is open (tests, status).
func (c *Collector) Subscribed() bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.push.sub != nil
}

// popPushed reads the queue over the kept subscription when a push or
// the safety re-read asks for it. ok false: there is no subscription
// (or it failed), and the pass reads as it would without one.
func (c *Collector) popPushed(ctx context.Context) (raw json.RawMessage, ok bool) {
	now := c.now()
	c.pmu.Lock()
	st := c.push
	// A node with no metadata yet waits for a push as the others do: its
	// queue was empty at the last read, and Heat's next post is pushed.
	// Reading it at every pass, as a polling node does, cost a pushed
	// fleet of 10,000 2.7 and 6.1 listings a node in an idle 10 minutes
	// (two runs; the design's is 1): the nodes whose first message a
	// start on 2 cores had lost read an empty queue every 30 s.
	due := st.dirty || st.lastRead.IsZero() || now.Sub(st.lastRead) >= c.safetyRead()
	if st.sub != nil && due {
		c.push.dirty, c.push.lastRead, c.push.pushed = false, now, nil
	}
	c.pmu.Unlock()
	if st.sub == nil {
		return nil, false
	}
	if !due {
		return nil, true
	}
	// Pushed: there is a message, pop it. Otherwise list first: an idle
	// read stays a read of Zaqar's store.
	raw, err := st.sub.PopNewest(ctx, c.Queue, !st.dirty)
	if err != nil {
		// The socket is suspect (Zaqar ends a socket's authentication when
		// its token expires, and refuses its requests from then on): drop
		// it, the listener subscribes anew, and this pass reads without it.
		c.Log.Debug("Reading over the subscription failed; reading anew: "+err.Error(), "queue", c.Queue.Name)
		st.sub.Close()
		return nil, false
	}
	if raw == nil && st.pushed != nil && !c.alreadyRead(st.pushed) {
		raw = st.pushed // notified, not yet listed: the message stays queued for a later read
	}
	return raw, true
}

// alreadyRead says whether body is one of the last documents read, the
// newest of a read or one it superseded: a notification that arrived
// after its message was popped (delayed, written after the answer that
// popped it, or pushed to the old socket and the new during a renewal)
// is not news,
// and standing in for an empty read it would take the node back a
// version (test/chaos caught 12 -> 11).
func (c *Collector) alreadyRead(body json.RawMessage) bool {
	doc, err := jsondoc.Loads(body)
	if err != nil {
		return false
	}
	return slices.Contains(c.recent, sha256.Sum256([]byte(jsondoc.Dumps(doc))))
}

// rememberJSON remembers a message read, if it is JSON.
func (c *Collector) rememberJSON(body json.RawMessage) {
	if doc, err := jsondoc.Loads(body); err == nil {
		c.remember(doc)
	}
}

// remember notes doc as read; the last few are kept (alreadyRead), as
// digests: a document can be megabytes, and a node lives with 8 of them.
func (c *Collector) remember(doc jsondoc.Value) {
	const keep = 8
	c.recent = append(c.recent, sha256.Sum256([]byte(jsondoc.Dumps(doc))))
	if len(c.recent) > keep {
		c.recent = c.recent[len(c.recent)-keep:]
	}
}

func (c *Collector) listening() bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.push.listening
}

func (c *Collector) safetyRead() time.Duration {
	if c.SafetyRead > 0 {
		return c.SafetyRead
	}
	return DefaultSafetyRead
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
