package keystone

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
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

// Once it holds a token, a session closes its connection to Keystone:
// the next authentication is an hour away, and a fleet started together
// would otherwise hold a socket per node on Keystone for 90 s.
func TestConnectionClosedAfterAuthentication(t *testing.T) {
	ks := keystonetest.New("pw")
	var mu sync.Mutex
	open := 0
	srv := httptest.NewUnstartedServer(ks)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open++
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ks.BaseURL = srv.URL
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Creds: Credentials{AuthURL: srv.URL + "/identity/v3", UserID: "uid", ProjectID: "pid", Password: "pw"}, HTTP: client.Standard()}
	if _, err := s.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := open
		mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d connections to Keystone still open after the token came", n)
		}
	}
}
