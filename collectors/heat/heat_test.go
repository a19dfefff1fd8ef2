package heat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
)

const password = "S3CRET-pw"

// cloud is a Keystone and a Heat on one test server; it counts the
// requests each gets.
type cloud struct {
	mu       sync.Mutex
	srv      *httptest.Server
	ks       *keystonetest.Server
	heat     int
	metadata string
	heatCode int
}

func newCloud(t *testing.T) *cloud {
	c := &cloud{ks: keystonetest.New(password),
		metadata: `{"deployments": [{"name": "d1", "group": "os-apply-config", "config": {"k": 1}}], "os-collect-config": {}}`}
	c.srv = httptest.NewServer(c)
	c.ks.BaseURL = c.srv.URL
	c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
	t.Cleanup(c.srv.Close)
	return c
}

func (c *cloud) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/heat/") {
		c.ks.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heat++
	switch {
	case !c.ks.Valid(r.Header.Get("X-Auth-Token")):
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	case c.heatCode != 0:
		http.Error(w, "broken", c.heatCode)
	case r.URL.EscapedPath() != "/heat/v1/pid/stacks/overcloud/0123-abcd/resources/Controller%200/metadata":
		http.Error(w, "no such resource "+r.URL.EscapedPath(), http.StatusNotFound)
	default:
		fmt.Fprintf(w, `{"metadata": %s}`, c.metadata)
	}
}

func (c *cloud) counts() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ks.Requests(), c.heat
}

func newCollector(t *testing.T, c *cloud, authPath string, log *bytes.Buffer) *Collector {
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &Collector{
		Session: &keystone.Session{Creds: keystone.Credentials{AuthURL: c.srv.URL + authPath, UserID: "uid", ProjectID: "pid", Password: password},
			HTTP: client.Standard()},
		StackID: "overcloud/0123-abcd", ResourceName: "Controller 0", Region: "null",
		DeploymentKeys: []string{"deployments"},
		Log:            slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func collect(t *testing.T, col *Collector) []string {
	t.Helper()
	entries, err := col.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names
}

// The token is reused across polls: an idle poll costs Heat one request
// and Keystone none (the reference: a discovery and an authentication
// every poll).
func TestTokenReusedAcrossPolls(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, "/identity/v2.0", &log)
	if got := collect(t, col); strings.Join(got, " ") != "heat d1" {
		t.Fatalf("keys %v", got)
	}
	k1, h1 := c.counts()
	for i := 0; i < 5; i++ {
		collect(t, col)
	}
	k2, h2 := c.counts()
	if k1 != 2 || k2 != k1 || h2-h1 != 5 {
		t.Fatalf("keystone %d then %d, heat %d then %d", k1, k2, h1, h2)
	}
	if strings.Contains(log.String(), password) {
		t.Fatal("the password in the log")
	}
}

// A token near its expiry is replaced before use; a refused one is
// replaced once, then the source is unavailable until the next poll.
func TestTokenExpiryAndRevocation(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, "/identity/v3", &log)
	now := time.Now()
	col.Session.Now = func() time.Time { return now }
	collect(t, col)
	now = now.Add(59 * time.Minute) // within 2 minutes of the expiry
	collect(t, col)
	if k, _ := c.counts(); k != 2 {
		t.Fatalf("keystone requests %d, want a new token for the poll near expiry", k)
	}

	col.Session.Now = time.Now
	c.ks.RevokeAll()
	collect(t, col) // 401, re-authenticated, retried
	if k, _ := c.counts(); k != 3 {
		t.Fatalf("keystone requests %d after a revocation", k)
	}
	// A Heat that refuses every token: one re-authentication, then an
	// error, not a loop.
	c.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/heat/") {
			c.ks.RevokeAll()
		}
		c.ServeHTTP(w, r)
	})
	k0, _ := c.counts()
	if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) {
		t.Fatalf("err %v", err)
	}
	if k, _ := c.counts(); k-k0 != 1 {
		t.Fatalf("%d keystone requests for a Heat that refuses every token, want 1 (one new token)", k-k0)
	}
}

// [keystone] cache_dir keeps the token for the next process: 0600 files
// in a 0700 directory; cache_ttl bounds its use.
func TestTokenCacheDir(t *testing.T) {
	c := newCloud(t)
	dir := filepath.Join(t.TempDir(), "keystone")
	var log bytes.Buffer
	col := newCollector(t, c, "/identity/v3", &log)
	col.Session.CacheDir, col.Session.CacheTTL = dir, 30*time.Minute
	collect(t, col)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir %v %v", fi, err)
	}
	files, _ := filepath.Glob(dir + "/token-*.json")
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file mode %v", fi.Mode())
	}
	data, _ := os.ReadFile(files[0])
	if strings.Contains(string(data), password) {
		t.Fatal("the password in the token cache")
	}
	k0, _ := c.counts()
	next := newCollector(t, c, "/identity/v3", &log) // a new process
	next.Session.CacheDir, next.Session.CacheTTL = dir, 30*time.Minute
	collect(t, next)
	if k, _ := c.counts(); k != k0 {
		t.Fatalf("a new process authenticated again despite the cache (%d -> %d)", k0, k)
	}
	later := newCollector(t, c, "/identity/v3", &log)
	later.Session.CacheDir, later.Session.CacheTTL = dir, 30*time.Minute
	later.Session.Now = func() time.Time { return time.Now().Add(31 * time.Minute) }
	collect(t, later)
	if k, _ := c.counts(); k == k0 {
		t.Fatal("a token older than cache_ttl was used")
	}
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *cloud, col *Collector)
		log   string
	}{
		{"wrong password", func(c *cloud, col *Collector) { col.Session.Creds.Password = "wrong" }, "keystone authentication at"},
		{"no orchestration endpoint", func(c *cloud, col *Collector) { c.ks.SetCatalog(map[string]string{"messaging": "http://x"}) }, "no public orchestration endpoint in the catalog"},
		{"other region", func(c *cloud, col *Collector) { col.Region = "RegionTwo" }, "no public orchestration endpoint in region RegionTwo"},
		{"heat 500", func(c *cloud, col *Collector) { c.heatCode = 500 }, "status 500"},
		{"metadata not an object", func(c *cloud, col *Collector) { c.metadata = "[1]" }, "is not a JSON object"},
		{"keystone down", func(c *cloud, col *Collector) { col.Session.Creds.AuthURL = "http://127.0.0.1:1/v3" }, "keystone authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			var log bytes.Buffer
			col := newCollector(t, c, "/identity/v3", &log)
			tc.setup(c, col)
			_, err := col.Collect(context.Background())
			if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(collectors.Cause(err).Error(), tc.log) {
				t.Fatalf("err %v\nlog %s", err, log.String())
			}
			if said := log.String() + err.Error(); strings.Contains(said, password) || strings.Contains(said, "wrong") {
				t.Fatalf("a password in the log or the cause: %s", said)
			}
		})
	}
}

func TestNotConfigured(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, "/identity/v3", &log)
	col.ResourceName = ""
	if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotConfigured) || !strings.Contains(log.String(), "No resource_name configured.") {
		t.Fatalf("err %v log %s", err, log.String())
	}
	if k, h := c.counts(); k+h != 0 {
		t.Fatal("an unconfigured collector made requests")
	}
}
