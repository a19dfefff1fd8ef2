package zaqarqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/signal"
)

// A ZAQAR_SIGNAL whose token and catalog came from the token cache is
// posted again once, with a new token and catalog, when the cached
// messaging endpoint does not answer or answers 404; a fresh catalog's
// failure is final. Each row posts twice with the cache (or without),
// changing the cloud in between, and counts the second post's
// authentications.
func TestCachedCatalogRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache bool
		// gone makes the first post's endpoint answer 404, closed
		// closes it, moved puts another in the catalog, revoke revokes
		// the first post's token.
		gone, closed, moved, revoke bool
		auths, posted               int
		wantErr                     string
	}{
		{name: "cached, usable: no authentication", cache: true, posted: 1},
		{name: "cached, 404, then posted", cache: true, gone: true, moved: true, auths: 1, posted: 1},
		{name: "cached, no answer, then posted", cache: true, closed: true, moved: true, auths: 1, posted: 1},
		{name: "cached, 404 again with a new catalog: once only", cache: true, gone: true, auths: 1, wantErr: "status 404"},
		{name: "cached, refused: replaced as before", cache: true, revoke: true, auths: 1, posted: 1},
		{name: "fresh, 404 is final", gone: true, auths: 1, wantErr: "status 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, d := setup(t)
			var gone atomic.Bool
			old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if gone.Load() {
					http.NotFound(w, r)
					return
				}
				c.ServeHTTP(w, r)
			}))
			t.Cleanup(old.Close)
			c.KS.SetCatalog(map[string]string{"messaging": old.URL + "/zaqar"})
			o := opts
			if tc.cache {
				o.TokenCache = t.TempDir()
			}
			if _, err := signal.Send(context.Background(), d, jsondoc.NewObject(0), o); err != nil {
				t.Fatal(err)
			}
			gone.Store(tc.gone)
			if tc.closed {
				old.Close()
			}
			if tc.moved {
				c.KS.SetCatalog(map[string]string{"messaging": c.Srv.URL + "/zaqar"})
			}
			if tc.revoke {
				c.KS.RevokeAll()
			}
			auths, posted := c.KS.Authentications(), len(c.Posted())
			_, err := signal.Send(context.Background(), d, jsondoc.NewObject(0), o)
			if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if a, p := c.KS.Authentications()-auths, len(c.Posted())-posted; a != tc.auths || p != tc.posted {
				t.Errorf("%d authentications, %d posted; want %d, %d", a, p, tc.auths, tc.posted)
			}
		})
	}
}
