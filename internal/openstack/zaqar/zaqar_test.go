package zaqar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

func newQueue(t testing.TB) (*Queue, *zaqartest.Cloud) {
	t.Helper()
	c := zaqartest.New("q1", "pw")
	t.Cleanup(c.Close)
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &keystone.Session{Creds: keystone.Credentials{AuthURL: c.AuthURL(), UserID: "uid", ProjectID: "pid", Password: "pw"}, HTTP: client.Standard()}
	return &Queue{Session: s, Name: "q1", Client: client, Log: logging.Discard}, c
}

// A post is Heat's signal wire format (API v1.1, the body as given, a
// TTL in seconds), and a pop takes it back.
func TestPostThenPop(t *testing.T) {
	q, c := newQueue(t)
	ctx := context.Background()
	body := json.RawMessage(`{"deploy_stdout": "ok", "deploy_status_code": 0}`)
	if err := q.Post(ctx, body, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	got := c.Posted()
	if len(got) != 1 || string(got[0].Body) != string(body) || got[0].TTL != 600 || got[0].ClientID != q.ClientID() {
		t.Fatalf("posted %+v", got)
	}
	popped, err := q.PopNewest(ctx)
	if err != nil || string(popped) != string(body) {
		t.Fatalf("popped %s, %v", popped, err)
	}
	if popped, err := q.PopNewest(ctx); err != nil || popped != nil {
		t.Fatalf("an empty queue gave %s, %v", popped, err)
	}
}

// Every pending message is popped, in batches, and the newest kept.
func TestPopNewestDrainsTheQueue(t *testing.T) {
	q, c := newQueue(t)
	for i := 1; i <= 45; i++ {
		c.Post(fmt.Sprintf(`{"n": %d}`, i))
	}
	got, err := q.PopNewest(context.Background())
	if err != nil || string(got) != `{"n": 45}` || c.Pops() != 3 || c.Pending() != 0 {
		t.Fatalf("popped %s, %v after %d pops, %d left", got, err, c.Pops(), c.Pending())
	}
}

// A post with a refused token gets a new one and is sent once.
// An idle poll reads the queue and does not pop it: a pop is a claim,
// a write to Zaqar's store even when nothing is pending. Any answer to
// the listing but a clear "empty" leaves the decision to the pop.
func TestPopOnlyWhenTheListingIsNotEmpty(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pending    int
		listFails  int
		wantPops   int
		wantPopped bool
	}{
		{name: "idle", wantPops: 0},
		{name: "pending", pending: 1, wantPops: 1, wantPopped: true},
		{name: "listing forbidden", listFails: 403, wantPops: 1},
		{name: "listing unknown", listFails: 404, wantPops: 1},
		{name: "listing failed", listFails: 503, pending: 1, wantPops: 1, wantPopped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, c := newQueue(t)
			for i := range tc.pending {
				c.Post(fmt.Sprintf(`{"n": %d}`, i))
			}
			c.FailLists(tc.listFails)
			got, err := q.PopNewest(context.Background())
			if err != nil || (got != nil) != tc.wantPopped {
				t.Fatalf("popped %s, %v", got, err)
			}
			if c.Lists() != 1 || c.Pops() != tc.wantPops {
				t.Fatalf("%d listings and %d pops, want 1 and %d", c.Lists(), c.Pops(), tc.wantPops)
			}
		})
	}
}

func TestPostReplacesARefusedToken(t *testing.T) {
	q, c := newQueue(t)
	ctx := context.Background()
	if _, err := q.Session.Token(ctx); err != nil {
		t.Fatal(err)
	}
	c.KS.RevokeAll()
	if err := q.Post(ctx, json.RawMessage(`{}`), time.Minute); err != nil || len(c.Posted()) != 1 {
		t.Fatalf("%v, %d posted", err, len(c.Posted()))
	}
}

// A websocket frame over the cap is refused as it announces its size,
// not read whole (a frame that says 1 GiB would take as much memory).
func TestWebsocketFrameOverTheCap(t *testing.T) {
	q, c := newQueue(t)
	c.KS.SetCatalog(map[string]string{"messaging-websocket": "ws" + strings.TrimPrefix(c.Srv.URL, "http") + "/ws"})
	q.MaxFrame = 1 << 20
	c.Post(`{"big": "` + strings.Repeat("x", 2<<20) + `"}`)
	_, err := q.PopOrWait(context.Background(), time.Second)
	if !errors.Is(err, httpclient.ErrTooLarge) || !strings.Contains(err.Error(), "(1048576 bytes)") {
		t.Fatalf("a 2 MiB frame under a 1 MiB cap: %v", err)
	}
	c.Post(`{"small": 1}`)
	if got, err := q.PopOrWait(context.Background(), time.Second); err != nil || string(got) != `{"small": 1}` {
		t.Fatalf("then a small one: %s, %v", got, err)
	}
}
