package notify_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

// endpoint is where a service was: a server of its own in front of the
// cloud, which can be closed (the API moved to another address) or made
// to answer 404 to everything (another service, or none, at that path).
type endpoint struct {
	srv  *httptest.Server
	gone atomic.Bool
}

func newEndpoint(t *testing.T, cloud http.Handler) *endpoint {
	e := &endpoint{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.gone.Load() {
			http.NotFound(w, r)
			return
		}
		cloud.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// staleCase is what changes in the cloud between two heat-config-notify
// runs that share the token cache: the second run's cached catalog is
// out of date.
type staleCase struct {
	name string
	// first and second are deploy_region_name of each run (JSON text, ""
	// for none).
	first, second string
	// before sets the cloud up for the first run (old is a server in
	// front of it, and path the service's path there); between changes
	// it before the second.
	before, between func(ks *keystonetest.Server, old *endpoint, path string)
	// auths is how many authentications the two runs take, and a third
	// like the second.
	auths int
	// moved: the second run's first request fails, and the entry is
	// dropped.
	moved bool
}

var staleCases = []staleCase{
	{name: "the same region: the cache saves", first: `"RegionOne"`, second: `"RegionOne"`, auths: 1},
	{name: "any region, then the cached one", second: `"RegionOne"`, auths: 1},
	{name: "a region added", second: `"RegionTwo"`, auths: 2,
		between: func(ks *keystonetest.Server, _ *endpoint, path string) {
			ks.AddEndpoint(keystonetest.Endpoint{Type: typeOf(path), Interface: "public", Region: "RegionTwo", URL: ks.BaseURL + path})
		}},
	{name: "a region's public endpoint added to its internal one", second: `"RegionTwo"`, auths: 2,
		before: func(ks *keystonetest.Server, _ *endpoint, path string) {
			ks.AddEndpoint(keystonetest.Endpoint{Type: typeOf(path), Interface: "internal", Region: "RegionTwo", URL: ks.BaseURL + path})
		},
		between: func(ks *keystonetest.Server, _ *endpoint, path string) {
			ks.AddEndpoint(keystonetest.Endpoint{Type: typeOf(path), Interface: "public", Region: "RegionTwo", URL: ks.BaseURL + path})
		}},
	{name: "the endpoint moved, the old address closed", first: `"RegionOne"`, second: `"RegionOne"`, auths: 2, moved: true,
		before: useOld, between: func(ks *keystonetest.Server, old *endpoint, path string) {
			old.srv.Close()
			ks.SetCatalog(map[string]string{typeOf(path): ks.BaseURL + path})
		}},
	{name: "the endpoint moved, the old one 404", auths: 2, moved: true,
		before: useOld, between: func(ks *keystonetest.Server, old *endpoint, path string) {
			old.gone.Store(true)
			ks.SetCatalog(map[string]string{typeOf(path): ks.BaseURL + path})
		}},
}

// useOld makes the first run's catalog name the old endpoint.
func useOld(ks *keystonetest.Server, old *endpoint, path string) {
	ks.SetCatalog(map[string]string{typeOf(path): old.srv.URL + path})
}

// typeOf is the service type of a service's path in the test clouds.
func typeOf(path string) string {
	if strings.HasPrefix(path, "/zaqar") {
		return "messaging"
	}
	return "orchestration"
}

// staleRuns runs heat-config-notify three times, as three processes
// would, sharing the token cache: the first with the first region, then
// tc.between, then twice with the second. Each must succeed; it returns
// the authentications and the logs.
func staleRuns(t *testing.T, tc staleCase, ks *keystonetest.Server, old *endpoint, path string, inputs func(region string) string) string {
	t.Helper()
	dir := t.TempDir()
	if tc.before != nil {
		tc.before(ks, old, path)
	}
	var logs string
	for i, region := range []string{tc.first, tc.second, tc.second} {
		if i == 1 && tc.between != nil {
			tc.between(ks, old, path)
		}
		code, log := run(t, `{"foo": "bar"}`, cacheVar(dir), writeDeployment(t, inputs(region)))
		logs += log
		if code != 0 {
			t.Fatalf("run %d: status %d, log:\n%s", i+1, code, logs)
		}
		if i == 1 {
			if n := ks.Authentications(); n != tc.auths {
				t.Errorf("%d authentications for two signals, want %d; log:\n%s", n, tc.auths, logs)
			}
		}
	}
	if n := ks.Authentications(); n != tc.auths {
		t.Errorf("the third signal authenticated: %d authentications, want %d", n, tc.auths)
	}
	if strings.Contains(logs, "pa55word") || strings.Contains(logs, "tok-") {
		t.Errorf("a secret in the log:\n%s", logs)
	}
	return logs
}

// A cached token is used only when its catalog has the endpoint the
// signal asks for (the service's public one, in deploy_region_name);
// else heat-config-notify authenticates again and keeps the new entry.
// When the cached endpoint does not answer, or answers 404, the entry is
// dropped and the signal sent again with a new token, within the same
// budget (1 s here). The runs are two processes with the same
// credentials against one Keystone whose catalog changed between them.
func TestStaleCachedCatalogHeatSignal(t *testing.T) {
	for _, tc := range staleCases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t, 0)
			old := newEndpoint(t, c.srv.Config.Handler)
			log := staleRuns(t, tc, c.ks, old, "/heat/v1/pid", c.heatInputs)
			if got := c.requests(); len(got) < 3 || got[len(got)-1] != signalled {
				t.Errorf("requests %q", got)
			}
			dropped := strings.Count(log, "dropping the cached Keystone token and authenticating again")
			if (dropped == 1) != tc.moved || dropped > 1 {
				t.Errorf("%d lines about a dropped entry; log:\n%s", dropped, log)
			}
		})
	}
}

// The same for ZAQAR_SIGNAL: the messaging endpoint.
func TestStaleCachedCatalogZaqarSignal(t *testing.T) {
	for _, tc := range staleCases {
		t.Run(tc.name, func(t *testing.T) {
			z := zaqartest.New("q1", "pa55word")
			t.Cleanup(z.Close)
			z.KS.SetCatalog(map[string]string{"messaging": z.Srv.URL + "/zaqar"})
			old := newEndpoint(t, z)
			staleRuns(t, tc, z.KS, old, "/zaqar", func(region string) string {
				s := `{"name": "deploy_auth_url", "value": "` + z.AuthURL() + `"}, {"name": "deploy_user_id", "value": "uid"},
					{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "pid"},
					{"name": "deploy_queue_id", "value": "q1"}`
				if region != "" {
					s += `, {"name": "deploy_region_name", "value": ` + region + `}`
				}
				return s
			})
			if n := len(z.Posted()); n != 3 {
				t.Errorf("%d messages posted, want 3", n)
			}
		})
	}
}
