package keystone

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
)

func newSession(t *testing.T) (*Session, *keystonetest.Server) {
	t.Helper()
	ks := keystonetest.New("pw")
	srv := httptest.NewServer(ks)
	t.Cleanup(srv.Close)
	ks.BaseURL = srv.URL
	ks.SetCatalog(map[string]string{"orchestration": srv.URL + "/heat", "messaging": srv.URL + "/zaqar"})
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Creds: Credentials{AuthURL: srv.URL + "/identity/v3", UserID: "uid", ProjectID: "pid", Password: "pw"}, HTTP: client.Standard()}
	return s, ks
}

// The region rule: empty and "null" (a null rendered by a template) mean
// any region; a named one must match the catalog's.
func TestEndpointRegion(t *testing.T) {
	s, ks := newSession(t)
	if _, err := s.Client(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		region string
		ok     bool
	}{{"", true}, {"null", true}, {ks.Region, true}, {"RegionTwo", false}} {
		url, err := s.Endpoint("orchestration", tc.region)
		if tc.ok && (err != nil || url != ks.BaseURL+"/heat/") {
			t.Errorf("region %q: %q, %v", tc.region, url, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("region %q: found %q", tc.region, url)
		}
	}
	if _, err := s.Endpoint("object-store", ""); err == nil {
		t.Error("a service that is not in the catalog was found")
	}
}

// A token is kept across calls, and one the service refuses is replaced
// once.
func TestTokenReusedAndReplacedWhenRefused(t *testing.T) {
	s, ks := newSession(t)
	ctx := context.Background()
	first, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	asked := ks.Requests()
	if again, _ := s.Token(ctx); again != first || ks.Requests() != asked {
		t.Fatalf("token %q then %q, %d more Keystone requests", first, again, ks.Requests()-asked)
	}
	var gets int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets++
		if !ks.Valid(r.Header.Get("X-Auth-Token")) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"ok": true}`))
	}))
	defer api.Close()
	ks.RevokeAll()
	var out struct{ OK bool }
	if err := s.Get(ctx, api.URL, &out); err != nil || !out.OK || gets != 2 {
		t.Fatalf("get with a revoked token: %v, %+v after %d requests", err, out, gets)
	}
}
