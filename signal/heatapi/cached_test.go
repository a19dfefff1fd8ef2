package heatapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/signal"
)

// A signal whose token and catalog came from the token cache (an earlier
// process kept them) is sent again once, with a new token and catalog,
// when the cached endpoint does not answer or answers 404: the
// undercloud may have moved its API. A fresh catalog's failure is final,
// a 5xx is retried at the same endpoint, and a refused token (401) is
// replaced as before. Each row signals twice: the first signal keeps the
// token (or, without a cache, not), then the cloud changes, then the
// second signal, whose Keystone and Heat requests are counted.
func TestCachedCatalogRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache bool
		stack string // deploy_stack_id ("" for the cloud's name/uuid)
		// answers are Heat's to the second signal; closed closes the
		// endpoint the first signal used, moved puts another in the
		// catalog, revoke revokes the first signal's token.
		answers               []int
		closed, moved, revoke bool
		// auths and requests are the second signal's; wantErr "" for a
		// success.
		auths, requests int
		wantErr         string
		dropped         bool
	}{
		{name: "cached, usable: no authentication", cache: true, requests: 1},
		{name: "cached, 404, then sent", cache: true, answers: []int{404}, auths: 1, requests: 2, dropped: true},
		{name: "cached, no answer, then sent", cache: true, closed: true, moved: true, auths: 1, requests: 1, dropped: true},
		{name: "cached, no answer, not moved: once only", cache: true, closed: true, auths: 1,
			wantErr: "retry budget of 1s spent", dropped: true},
		{name: "cached, the lookup 404, then sent", cache: true, stack: "0f1e-uuid", answers: []int{404}, auths: 1, requests: 3, dropped: true},
		{name: "cached, 404 twice: once only", cache: true, answers: []int{404, 404}, auths: 1, requests: 2,
			wantErr: "HTTP 404 Not Found", dropped: true},
		{name: "cached, 503: retried at the same endpoint", cache: true, answers: []int{503}, requests: 2},
		{name: "cached, refused: replaced as before", cache: true, revoke: true, auths: 1, requests: 2},
		{name: "fresh, 404 is final", answers: []int{404}, auths: 1, requests: 1, wantErr: "HTTP 404 Not Found"},
		{name: "fresh, no answer: retried within the budget", closed: true, auths: 1, wantErr: "retry budget of 1s spent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			if tc.stack != "" {
				c.stack = tc.stack
			}
			old := httptest.NewServer(c.srv.Config.Handler)
			t.Cleanup(old.Close)
			c.ks.SetCatalog(map[string]string{"orchestration": old.URL + "/heat/v1/pid"})
			o := opts
			if tc.cache {
				o.TokenCache = t.TempDir()
			}
			if _, err := signal.Send(context.Background(), c.deployment(t, `"RegionOne"`), data(), o); err != nil {
				t.Fatal(err)
			}
			if tc.closed {
				old.Close()
			}
			if tc.moved {
				c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
			}
			if tc.revoke {
				c.ks.RevokeAll()
			}
			c.mu.Lock()
			c.answers, c.got = tc.answers, nil
			c.mu.Unlock()
			auths := c.ks.Authentications()
			var log bytes.Buffer
			o.Log = slog.New(slog.NewTextHandler(&log, nil))
			_, err := signal.Send(context.Background(), c.deployment(t, `"RegionOne"`), data(), o)
			if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q; log:\n%s", err, tc.wantErr, log.String())
			}
			c.mu.Lock()
			requests := len(c.got)
			c.mu.Unlock()
			if n := c.ks.Authentications() - auths; n != tc.auths || tc.requests != 0 && requests != tc.requests {
				t.Errorf("%d authentications, %d requests to Heat; want %d, %d", n, requests, tc.auths, tc.requests)
			}
			dropped := strings.Count(log.String(), "dropping the cached Keystone token")
			if (dropped == 1) != tc.dropped || dropped > 1 || strings.Contains(log.String(), "pa55word") || strings.Contains(log.String(), "tok-") {
				t.Errorf("%d lines about a dropped entry, want %v; log:\n%s", dropped, tc.dropped, log.String())
			}
		})
	}
}

// The WARNING about a dropped entry quotes the server's words without
// the token or the password, should the server echo them.
func TestDroppedEntryLogHasNoSecret(t *testing.T) {
	c := newCloud(t)
	var gone atomic.Bool
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error": {"message": "no such path; you sent token `+r.Header.Get("X-Auth-Token")+` and password pa55word"}}`)
			return
		}
		c.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(old.Close)
	c.ks.SetCatalog(map[string]string{"orchestration": old.URL + "/heat/v1/pid"})
	o := opts
	o.TokenCache = t.TempDir()
	if _, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), o); err != nil {
		t.Fatal(err)
	}
	gone.Store(true)
	c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
	var log bytes.Buffer
	o.Log = slog.New(slog.NewTextHandler(&log, nil))
	if _, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "no such path; you sent token *** and password ***") || strings.Contains(log.String(), "tok-") ||
		strings.Contains(log.String(), "pa55word") {
		t.Errorf("log:\n%s", log.String())
	}
}
