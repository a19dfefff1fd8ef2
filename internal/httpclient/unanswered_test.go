package httpclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// hangUp is a server that closes every connection it accepts without a
// word, and counts them.
func hangUp(t *testing.T) (string, *atomic.Int32) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			conn.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/x", &n
}

// Under WithUnansweredFinal a request that gets no answer is tried once
// (the caller has a better URL to try); an answer the policy retries (a
// 503) is retried as before. A request without an answer is ErrNoAnswer,
// with or without retries; one stopped by its context, or answered, is
// not.
func TestUnansweredFinal(t *testing.T) {
	var hits atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(flaky.Close)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(loop.Close)
	for _, tc := range []struct {
		name      string
		server    string // "hang up", "flaky", "404", "loop"
		final     bool
		deadline  bool
		cancelled bool
		// attempts is how many requests the server got.
		attempts int32
		status   int // 0: no answer
		noAnswer bool
	}{
		{"no answer, final", "hang up", true, true, false, 1, 0, true},
		{"no answer, final, no retry deadline", "hang up", true, false, false, 1, 0, true},
		{"no answer, retried", "hang up", false, true, false, 4, 0, true},
		{"no answer, retried, no retry deadline", "hang up", false, false, false, 4, 0, true},
		{"a 503 is retried still", "flaky", true, true, false, 2, 200, false},
		{"a 404 is an answer", "404", true, true, false, 1, 404, false},
		{"stopped by the caller", "hang up", true, true, true, 0, 0, false},
		{"redirected for ever: answered", "loop", true, true, false, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, n := hangUp(t)
			switch tc.server {
			case "flaky":
				hits.Store(0)
				url, n = flaky.URL, &hits
			case "404":
				url = notFound.URL
			case "loop":
				url = loop.URL
			}
			c, _ := New(Options{Retries: 3, Timeout: time.Second, MaxWait: 20 * time.Millisecond})
			ctx := context.Background()
			if tc.deadline {
				ctx = WithRetryDeadline(ctx, time.Now().Add(5*time.Second))
			}
			if tc.final {
				ctx = WithUnansweredFinal(ctx)
			}
			if tc.cancelled {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			resp, err := c.Deliver(ctx, http.MethodPost, url, nil, []byte("{}"))
			if got := errors.Is(err, ErrNoAnswer); got != tc.noAnswer {
				t.Errorf("ErrNoAnswer %v, want %v: %v", got, tc.noAnswer, err)
			}
			switch {
			case tc.status == 0 && err == nil:
				t.Fatalf("answered: %+v", resp)
			case tc.status != 0 && (err != nil || resp.Status != tc.status):
				t.Fatalf("%v %v, want status %d", resp, err, tc.status)
			}
			if tc.server == "404" || tc.server == "loop" {
				return
			}
			if got := n.Load(); got != tc.attempts {
				t.Errorf("%d requests, want %d (%v)", got, tc.attempts, err)
			}
		})
	}
}
