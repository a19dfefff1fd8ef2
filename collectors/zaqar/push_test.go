package zaqar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

// bound is how long a test waits for what should take milliseconds.
const bound = 5 * time.Second

// listening starts Listen and returns its wake-ups; the test's end stops
// it and checks it returned.
func listening(t *testing.T, col *Collector, p collectors.Push) <-chan struct{} {
	t.Helper()
	col.UseWebsockets = true
	wake := make(chan struct{}, 1)
	p.Wake = func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if p.Rand == nil {
		p.Rand = func() float64 { return 0.5 }
	}
	if p.After == nil {
		p.After = func(time.Duration) <-chan time.Time { return nil } // an hour is forever here
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); col.Listen(ctx, p) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(bound):
			t.Error("Listen did not return after its context ended")
		}
	})
	return wake
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(bound); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, bound)
		}
	}
}

func woken(t *testing.T, wake <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(bound):
		t.Fatalf("no wake-up for %s within %v", what, bound)
	}
}

func TestPushWakesAndIsRead(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	c.Post(snapshot(1))
	wake := listening(t, col, collectors.Push{Backoff: time.Hour})
	woken(t, wake, "the subscription") // read what came while no one listened
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 1,`) {
		t.Fatalf("first read: %s", doc)
	}
	// Nothing pushed yet: the catch-up read listed before it popped.
	if a := c.Actions(); a["message_list"] != 1 || a["message_delete_many"] != 1 {
		t.Fatalf("catch-up read: %v", a)
	}
	start := time.Now()
	c.Post(snapshot(2))
	woken(t, wake, "a posted message")
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
		t.Fatalf("pushed read: %s", doc)
	}
	t.Logf("posted → read in %v", time.Since(start))
	if a := c.Actions(); a["authenticate"] != 1 || a["subscription_create"] != 1 || c.Lists()+c.Pops() != 0 {
		t.Fatalf("one socket for all: %v, HTTP %d lists %d pops", a, c.Lists(), c.Pops())
	}
	if strings.Contains(log.String(), password) || strings.Contains(log.String(), "X-Auth-Token") {
		t.Fatalf("a secret in the log:\n%s", log.String())
	}
}

// Idle, a subscribed collector reads nothing a pass but a listing every
// SafetyRead, and replaces its subscription before the ttl: an hour of
// 30 s passes costs at most 10% of polling's 268 requests.
func TestIdleHourWithinBudget(t *testing.T) {
	c := newCloud(t)
	col := newCollector(t, c, &bytes.Buffer{})
	c.Post(snapshot(1))
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	col.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	renew := make(chan time.Time)
	wake := listening(t, col, collectors.Push{Backoff: time.Hour, After: func(d time.Duration) <-chan time.Time {
		if d == DefaultSubscriptionTTL*3/4 {
			return renew
		}
		return nil
	}})
	woken(t, wake, "the subscription")
	collect(t, col)
	before := c.Requests()
	const passes = 120 // an hour at polling_interval 30
	for i := 1; i <= passes; i++ {
		mu.Lock()
		now = now.Add(30 * time.Second)
		mu.Unlock()
		if i == passes*3/4 { // 45 min: the subscription is replaced
			renew <- time.Time{}
		}
		if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d1" {
			t.Fatalf("pass %d: %v", i, names)
		}
	}
	waitFor(t, "renewed subscription", func() bool { return c.Actions()["subscription_create"] == 2 })
	spent := c.Requests() - before
	t.Logf("idle hour: %d requests (%v), %d before it", spent, c.Actions(), before)
	if budget := 268 / 10; spent > budget {
		t.Fatalf("an idle hour cost %d requests, over the budget of %d", spent, budget)
	}
	// The old socket closes after the new one subscribed, asynchronously.
	waitFor(t, "the old subscription's end", func() bool { return c.Subscribers() == 1 })
}

// A subscribed node whose queue held nothing yet (a first boot before
// Heat posted, or a first message lost to a start that timed out) waits
// for the push as an idle node does: its passes read nothing until the
// safety listing, and Heat's post is read at once.
func TestNoMetadataYetWaitsForThePush(t *testing.T) {
	c := newCloud(t)
	col := newCollector(t, c, &bytes.Buffer{})
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	col.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	wake := listening(t, col, collectors.Push{Backoff: time.Hour})
	woken(t, wake, "the subscription")
	before := c.Requests()
	for i := 1; i <= 10; i++ { // 5 minutes of 30 s passes
		mu.Lock()
		now = now.Add(30 * time.Second)
		mu.Unlock()
		if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) {
			t.Fatalf("pass %d: %v, want unavailable (no metadata yet)", i, err)
		}
	}
	if spent := c.Requests() - before; spent > 1 {
		t.Fatalf("10 passes with no metadata yet read the queue %d times (%v); want the catch-up listing at most", spent, c.Actions())
	}
	c.Post(snapshot(1))
	woken(t, wake, "Heat's first post")
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 1,`) {
		t.Fatalf("pushed read: %s", doc)
	}
}

// A socket that drops (closed, or silent past the pong deadline) makes
// every pass read the queue again at once; the subscription comes back
// with full-jitter exponential backoff, and a message posted while it was
// down is read by the next pass.
func TestDroppedSocketFallsBackAndResubscribes(t *testing.T) {
	for _, drop := range []struct {
		name string
		do   func(*zaqartest.Cloud)
	}{
		{"closed", (*zaqartest.Cloud).DropSockets},
		{"silent", func(c *zaqartest.Cloud) { c.IgnorePings(true) }},
	} {
		t.Run(drop.name, func(t *testing.T) {
			c := newCloud(t)
			var log bytes.Buffer
			col := newCollector(t, c, &log)
			col.Queue.PingEvery, col.Queue.PongWait = 20*time.Millisecond, 20*time.Millisecond
			c.Post(snapshot(1))
			waits, stopped := make(chan time.Duration), make(chan struct{})
			wake := listening(t, col, collectors.Push{Backoff: 8 * time.Second, Rand: func() float64 { return 0.5 },
				After: func(d time.Duration) <-chan time.Time {
					if d == DefaultSubscriptionTTL*3/4 {
						return nil
					}
					select { // the test paces the retries
					case waits <- d:
						return elapsedAfter()
					case <-stopped:
						return nil
					}
				}})
			t.Cleanup(func() { close(stopped) }) // before Listen's end is awaited
			woken(t, wake, "the subscription")
			collect(t, col)
			c.RefuseSubscriptions(true)
			drop.do(c)
			woken(t, wake, "the drop")
			waitFor(t, "the fallback", func() bool { return !col.Subscribed() })
			c.IgnorePings(false)
			var got []time.Duration
			for len(got) < 5 {
				got = append(got, <-waits)
			}
			// Ceilings 1, 2, 4, 8, 8 s; the jitter drew half of each.
			want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}
			if !equalDurations(got, want) {
				t.Fatalf("backoff %v, want %v", got, want)
			}
			c.Post(snapshot(2)) // while no one listens
			lists := c.Lists() + c.Actions()["message_delete_many"]
			if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
				t.Fatalf("a pass while down: %s", doc)
			}
			if c.Lists()+c.Actions()["message_delete_many"] == lists {
				t.Fatal("the pass while down did not read the queue")
			}
			c.RefuseSubscriptions(false)
			go func() {
				for {
					select { // further retries, if the last one raced the refusal
					case <-waits:
					case <-stopped:
						return
					}
				}
			}()
			waitFor(t, "the subscription back", col.Subscribed)
			if !strings.Contains(log.String(), "Zaqar push lost; polling until it is back") {
				t.Fatalf("log:\n%s", log.String())
			}
		})
	}
}

func elapsedAfter() <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBackoffFullJitter(t *testing.T) {
	for _, tc := range []struct {
		n     int
		limit time.Duration
		rand  float64
		want  time.Duration
	}{
		{1, 5 * time.Minute, 0.999, 999 * time.Millisecond},
		{4, 5 * time.Minute, 1 - 1e-9, 8 * time.Second},
		{30, 5 * time.Minute, 0.5, 150 * time.Second},
		{30, 30 * time.Second, 0, 0},
		{2, 0, 0.5, 500 * time.Millisecond}, // no polling interval: a second
	} {
		got := Backoff(tc.n, tc.limit, func() float64 { return tc.rand })
		if d := got - tc.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("Backoff(%d, %v, %v) = %v, want %v", tc.n, tc.limit, tc.rand, got, tc.want)
		}
	}
}

// Zaqar stops a socket's requests when its token expires: the pass that
// meets the refusal reads with a new token, and the listener subscribes
// anew.
func TestExpiredTokenRenewsTheSocket(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	c.Post(snapshot(1))
	wake := listening(t, col, collectors.Push{Backoff: time.Second, After: func(d time.Duration) <-chan time.Time {
		if d == DefaultSubscriptionTTL*3/4 {
			return nil
		}
		return elapsedAfter()
	}})
	woken(t, wake, "the subscription")
	collect(t, col)
	c.KS.RevokeAll()
	c.Post(snapshot(2))
	woken(t, wake, "a posted message")
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
		t.Fatalf("after the token's expiry: %s", doc)
	}
	waitFor(t, "a new subscription", func() bool { return c.Actions()["subscription_create"] == 2 && col.Subscribed() })
	if strings.Contains(log.String(), password) {
		t.Fatal("the password in the log")
	}
}

// A notification that arrives after its message was read is not news:
// it does not stand in for an empty read, which would take the node
// back a version. One that was not read yet still does (Zaqar notifies
// before a Swift-backed queue lists the message).
func TestLateNotificationIsNotNews(t *testing.T) {
	c := newCloud(t)
	col := newCollector(t, c, &bytes.Buffer{})
	wake := listening(t, col, collectors.Push{Backoff: time.Hour})
	woken(t, wake, "the subscription")
	for v := 1; v <= 2; v++ {
		c.Post(snapshot(v))
		woken(t, wake, "a posted message")
		if _, doc := collect(t, col); !strings.HasPrefix(doc, fmt.Sprintf(`{"z": %d,`, v)) {
			t.Fatalf("read %d: %s", v, doc)
		}
	}
	c.Notify(snapshot(1)) // late: version 1 was read before version 2
	woken(t, wake, "the late notification")
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
		t.Fatalf("a late notification took the node back: %s", doc)
	}
	c.Notify(snapshot(3)) // notified before the queue lists it
	woken(t, wake, "a notification ahead of the listing")
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 3,`) {
		t.Fatalf("a notification ahead of its listing: %s", doc)
	}
}

// A read that pops several messages keeps the newest, and the older ones
// are read too: a notification of one of them that comes after the read
// (Zaqar writes notifications apart from answers, so one can follow the
// answer that popped its message; test/chaos caught 12 -> 11) is old
// news as well.
func TestLateNotificationOfASupersededMessageIsNotNews(t *testing.T) {
	c := newCloud(t)
	col := newCollector(t, c, &bytes.Buffer{})
	listening(t, col, collectors.Push{Backoff: time.Hour})
	waitFor(t, "the subscription", col.Subscribed)
	c.Post(snapshot(1), snapshot(2))
	waitFor(t, "the notifications", func() bool { return pushed(col) == snapshot(2) })
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
		t.Fatalf("read: %s", doc)
	}
	c.Notify(snapshot(1)) // late: version 1 was popped with version 2
	waitFor(t, "the late notification", func() bool { return pushed(col) == snapshot(1) })
	if _, doc := collect(t, col); !strings.HasPrefix(doc, `{"z": 2,`) {
		t.Fatalf("a late notification of a superseded message took the node back: %s", doc)
	}
}

// pushed is the newest notification not yet read.
func pushed(col *Collector) string {
	col.pmu.Lock()
	defer col.pmu.Unlock()
	return string(col.push.pushed)
}
