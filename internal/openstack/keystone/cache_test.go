package keystone

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
)

// The entry's name depends on every credential, the password included,
// and holds none of them.
func TestCacheKeyHasEveryCredential(t *testing.T) {
	base := Credentials{AuthURL: "http://ks/v3", UserID: "uid", ProjectID: "pid", Password: "pw"}
	seen := map[string]string{}
	for name, c := range map[string]Credentials{
		"base":     base,
		"auth url": {AuthURL: "http://ks2/v3", UserID: "uid", ProjectID: "pid", Password: "pw"},
		"user":     {AuthURL: base.AuthURL, UserID: "uid2", ProjectID: "pid", Password: "pw"},
		"project":  {AuthURL: base.AuthURL, UserID: "uid", ProjectID: "pid2", Password: "pw"},
		"password": {AuthURL: base.AuthURL, UserID: "uid", ProjectID: "pid", Password: "pw2"},
		"shifted":  {AuthURL: base.AuthURL, UserID: "uidp", ProjectID: "id", Password: "pw"},
	} {
		path := (&Session{Creds: c, CacheDir: "/c"}).cachePath()
		if other, dup := seen[path]; dup {
			t.Errorf("%s and %s share %s", name, other, path)
		}
		seen[path] = name
		if strings.Contains(path, string(c.Password)) || strings.Contains(path, c.UserID) {
			t.Errorf("%s: a credential in %s", name, path)
		}
	}
	if again := (&Session{Creds: base, CacheDir: "/c"}).cachePath(); seen[again] != "base" {
		t.Errorf("the same credentials found %s", again)
	}
}

// A new process takes the entry while it is valid, not within the
// margin of its expiry nor past cache_ttl; a bad entry is one warning
// per session, however often it is read.
func TestCacheEntryValidity(t *testing.T) {
	s, ks := newSession(t)
	s.CacheDir = t.TempDir()
	ctx := context.Background()
	if _, err := s.Token(ctx); err != nil {
		t.Fatal(err)
	}
	next := func(at time.Duration) (*Session, *bytes.Buffer) {
		n, _ := newSession(t)
		n.Creds, n.CacheDir, n.CacheTTL = s.Creds, s.CacheDir, 30*time.Minute
		n.Now = func() time.Time { return time.Now().Add(at) }
		var log bytes.Buffer
		n.Log = slog.New(slog.NewTextHandler(&log, nil))
		return n, &log
	}
	for _, tc := range []struct {
		at   time.Duration
		ttl  time.Duration
		used bool
	}{{0, 0, true}, {29 * time.Minute, 30 * time.Minute, true}, {31 * time.Minute, 30 * time.Minute, false},
		{57 * time.Minute, 0, true}, {59 * time.Minute, 0, false}, {2 * time.Hour, 0, false}} {
		n, _ := next(tc.at)
		n.CacheTTL = tc.ttl
		n.mu.Lock()
		used := n.loadCache()
		n.mu.Unlock()
		if used != tc.used {
			t.Errorf("at +%v, ttl %v: used %v, want %v", tc.at, tc.ttl, used, tc.used)
		}
	}
	path := s.cachePath()
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, log := next(0)
	for range 3 {
		n.mu.Lock()
		if n.loadCache() {
			t.Fatal("a garbled entry was used")
		}
		n.mu.Unlock()
	}
	if c := strings.Count(log.String(), "level=WARN"); c != 1 || strings.Contains(log.String(), "garbage") {
		t.Errorf("%d warnings, want 1 not quoting the file:\n%s", c, log)
	}
	asked := ks.Authentications()
	if _, err := n.Token(ctx); err != nil || ks.Authentications() != asked+1 {
		t.Fatalf("after a bad entry: %v, %d authentications", err, ks.Authentications()-asked)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() < 20 {
		t.Errorf("the bad entry was not replaced: %v, %v", fi, err)
	}
}

// A cached entry is taken only when its catalog has every endpoint the
// session Needs (public, in the region asked for; any region for "" and
// "null"); else the session authenticates again and the new entry
// replaces the old one, which the next session takes. Cached tells which
// it was.
func TestCachedEntryNeedsItsEndpoints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		needs []Service
		used  bool
	}{
		{"nothing needed", nil, true},
		{"any region", []Service{{"orchestration", ""}}, true},
		{"null region", []Service{{"orchestration", "null"}}, true},
		{"the region cached", []Service{{"orchestration", "RegionOne"}}, true},
		{"two services cached", []Service{{"orchestration", "RegionOne"}, {"messaging", ""}}, true},
		{"a region added since", []Service{{"orchestration", "RegionTwo"}}, false},
		{"a region cached with an internal endpoint only", []Service{{"messaging", "RegionTwo"}}, false},
		{"one of two services added since", []Service{{"orchestration", ""}, {"object-store", ""}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ks := newSession(t)
			s.CacheDir = t.TempDir()
			ks.AddEndpoint(keystonetest.Endpoint{Type: "messaging", Interface: "internal", Region: "RegionTwo", URL: ks.BaseURL + "/zaqar2"})
			ctx := context.Background()
			if _, err := s.Token(ctx); err != nil || s.Cached() {
				t.Fatalf("%v, cached %v", err, s.Cached())
			}
			ks.AddEndpoint(keystonetest.Endpoint{Type: "orchestration", Interface: "public", Region: "RegionTwo", URL: ks.BaseURL + "/heat2"})
			ks.AddEndpoint(keystonetest.Endpoint{Type: "messaging", Interface: "public", Region: "RegionTwo", URL: ks.BaseURL + "/zaqar2"})
			ks.AddEndpoint(keystonetest.Endpoint{Type: "object-store", Interface: "public", Region: "RegionOne", URL: ks.BaseURL + "/swift"})
			for i, want := range []bool{tc.used, true} {
				n, _ := newSession(t)
				n.Creds, n.CacheDir, n.Needs = s.Creds, s.CacheDir, tc.needs
				var log bytes.Buffer
				n.Log = slog.New(slog.NewTextHandler(&log, nil))
				before := ks.Authentications()
				if _, err := n.Token(ctx); err != nil {
					t.Fatal(err)
				}
				if n.Cached() != want || (ks.Authentications() == before) != want {
					t.Errorf("session %d: cached %v, %d authentications; want cached %v", i+2, n.Cached(), ks.Authentications()-before, want)
				}
				for _, sv := range tc.needs {
					if _, err := n.Endpoint(sv.Type, sv.Region); err != nil {
						t.Errorf("session %d: %v", i+2, err)
					}
				}
				if passed := strings.Contains(log.String(), "level=INFO msg=\"The cached Keystone token's catalog has no public "); passed == want {
					t.Errorf("session %d: log:\n%s", i+2, log.String())
				}
			}
		})
	}
}
