package zaqar

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
)

// A restarted collector with [keystone] cache_dir does not take a cached
// token whose catalog lacks the endpoint it uses (messaging, or
// messaging-websocket with use-websockets) in its region-name (a region
// added since): it authenticates again and pops.
func TestCachedCatalogWithoutTheRegion(t *testing.T) {
	for _, websockets := range []bool{false, true} {
		name, service := "http", "messaging"
		if websockets {
			name, service = "websocket", "messaging-websocket"
		}
		t.Run(name, func(t *testing.T) {
			c := newCloud(t)
			globals := collectors.Globals{KeystoneCacheDir: filepath.Join(t.TempDir(), "keystone"), CacheDir: t.TempDir(), DeploymentKeys: []string{"deployments"}}
			url := c.Srv.URL + "/zaqar"
			if websockets {
				url = "ws" + strings.TrimPrefix(c.Srv.URL, "http") + "/ws"
			}
			for i, region := range []string{"RegionOne", "RegionTwo", "RegionTwo"} {
				if i == 1 {
					c.KS.AddEndpoint(keystonetest.Endpoint{Type: service, Interface: "public", Region: "RegionTwo", URL: url})
				}
				cfg := &Config{Creds: keystone.Credentials{AuthURL: c.AuthURL(), UserID: "uid", ProjectID: "pid", Password: password},
					QueueID: "q1", RegionName: region, UseWebsockets: websockets}
				col, err := cfg.New(globals, logging.Discard) // a new process
				if err != nil {
					t.Fatal(err)
				}
				c.Post(snapshot(i))
				if entries, err := col.Collect(context.Background()); err != nil || len(entries) == 0 {
					t.Fatalf("poll %d, %s: %v %v", i+1, region, entries, err)
				}
				if n, want := c.KS.Authentications(), min(i+1, 2); n != want {
					t.Errorf("poll %d, %s: %d authentications in all, want %d", i+1, region, n, want)
				}
			}
		})
	}
}
