package heat

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
)

// A restarted collector with [keystone] cache_dir does not take a cached
// token whose catalog lacks the Heat endpoint of its region-name (a
// region added since): it authenticates again and polls.
func TestCachedCatalogWithoutTheRegion(t *testing.T) {
	c := newCloud(t)
	globals := collectors.Globals{KeystoneCacheDir: filepath.Join(t.TempDir(), "keystone")}
	for i, region := range []string{"RegionOne", "RegionTwo", "RegionTwo"} {
		if i == 1 {
			c.ks.AddEndpoint(keystonetest.Endpoint{Type: "orchestration", Interface: "public", Region: "RegionTwo", URL: c.srv.URL + "/heat/v1/pid"})
		}
		cfg := &Config{Creds: keystone.Credentials{AuthURL: c.srv.URL + "/identity/v3", UserID: "uid", ProjectID: "pid", Password: password},
			StackID: "overcloud/0123-abcd", ResourceName: "Controller 0", RegionName: region}
		col, err := cfg.New(globals, logging.Discard) // a new process
		if err != nil {
			t.Fatal(err)
		}
		if _, err := col.Collect(context.Background()); err != nil {
			t.Fatalf("poll %d, %s: %v", i+1, region, err)
		}
		if n, want := c.ks.Authentications(), min(i+1, 2); n != want {
			t.Errorf("poll %d, %s: %d authentications in all, want %d", i+1, region, n, want)
		}
	}
}
