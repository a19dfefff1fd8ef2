package httpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A redirect is followed, as net/http does, unless the context says
// WithoutRedirects: then the 302 is the answer, with its Location, and
// the other host never sees the request nor its token; under a retry
// deadline too (the retrier shares the client).
func TestWithoutRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte("followed"))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stacks/name/id", http.StatusFound)
	}))
	defer srv.Close()
	c, err := New(Options{Timeout: 5 * time.Second, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	token := http.Header{"X-Auth-Token": {"tok"}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"plain", context.Background()},
		{"under a retry deadline", WithRetryDeadline(context.Background(), time.Now().Add(5*time.Second))},
	} {
		elsewhere.Store(0)
		r, err := c.Do(WithoutRedirects(tc.ctx), http.MethodGet, srv.URL+"/stacks/id", token, nil)
		if err != nil || r.Status != http.StatusFound || r.Header.Get("Location") != other.URL+"/stacks/name/id" || elsewhere.Load() != 0 {
			t.Errorf("%s: without redirects: %+v %v, %d requests elsewhere", tc.name, r, err, elsewhere.Load())
		}
		r, err = c.Do(tc.ctx, http.MethodGet, srv.URL+"/stacks/id", nil, nil)
		if err != nil || r.Status != http.StatusOK || string(r.Body) != "followed" || elsewhere.Load() != 1 {
			t.Errorf("%s: followed: %+v %v", tc.name, r, err)
		}
	}
}
