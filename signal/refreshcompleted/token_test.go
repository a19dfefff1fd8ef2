package refreshcompleted

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/all"
)

// HEAT_SIGNAL deployments of one stack user share one authentication,
// within a run and with the next run, through the token cache.
func TestTokenSharedAcrossDeployments(t *testing.T) {
	ks, srv, signals := heatCloud(t)
	deployment := func(id string) map[string]any {
		return oacDeployment(id, [2]string{"deploy_auth_url", srv.URL + "/identity/v3"}, [2]string{"deploy_user_id", "uid"},
			[2]string{"deploy_password", "pa55word"}, [2]string{"deploy_project_id", "pid"},
			[2]string{"deploy_stack_id", "stk/" + id}, [2]string{"deploy_resource_name", "r"})
	}
	cache := t.TempDir()
	for i, ids := range [][]string{{"a", "b"}, {"c"}} {
		var deployments []any
		for _, id := range ids {
			deployments = append(deployments, deployment(id))
		}
		n := newNode(t, map[string]any{"deployments": deployments})
		runWithCache(t, n, cache, i+1)
	}
	if signals.Load() != 3 || ks.Authentications() != 1 {
		t.Errorf("%d signals, %d authentications; want 3, 1", signals.Load(), ks.Authentications())
	}
}

// A run whose deployment names a region that the cached catalog, kept
// by the run before, did not have (a region added since) authenticates
// again and signals, as heat-config-notify does: it shares its code.
func TestCachedCatalogWithoutTheRegion(t *testing.T) {
	ks, srv, signals := heatCloud(t)
	cache := t.TempDir()
	for i, region := range []string{"RegionOne", "RegionTwo"} {
		if i == 1 {
			ks.AddEndpoint(keystonetest.Endpoint{Type: "orchestration", Interface: "public", Region: "RegionTwo", URL: srv.URL + "/heat/v1/pid"})
		}
		d := oacDeployment(region, [2]string{"deploy_auth_url", srv.URL + "/identity/v3"}, [2]string{"deploy_user_id", "uid"},
			[2]string{"deploy_password", "pa55word"}, [2]string{"deploy_project_id", "pid"},
			[2]string{"deploy_stack_id", "stk/" + region}, [2]string{"deploy_resource_name", "r"}, [2]string{"deploy_region_name", region})
		n := newNode(t, map[string]any{"deployments": []any{d}})
		runWithCache(t, n, cache, i+1)
	}
	if signals.Load() != 2 || ks.Authentications() != 2 {
		t.Errorf("%d signals, %d authentications; want 2, 2", signals.Load(), ks.Authentications())
	}
}

// heatCloud is Keystone and Heat's API behind one server, a stack user
// with the password "pa55word" and Heat in the catalog; signals counts
// the signals Heat took with a valid token.
func heatCloud(t *testing.T) (*keystonetest.Server, *httptest.Server, *atomic.Int32) {
	t.Helper()
	ks := keystonetest.New("pa55word")
	signals := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/identity"):
			ks.ServeHTTP(w, r)
		case !ks.Valid(r.Header.Get("X-Auth-Token")):
			w.WriteHeader(http.StatusUnauthorized)
		default:
			signals.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	ks.BaseURL = srv.URL
	ks.SetCatalog(map[string]string{"orchestration": srv.URL + "/heat/v1/pid"})
	return ks, srv, signals
}

// runWithCache runs 99-refresh-completed on the node, with the token
// cache in dir; run numbers it in a failure.
func runWithCache(t *testing.T, n *node, dir string, run int) {
	t.Helper()
	opts := signal.Options{Budget: -1, Transports: all.Transports}
	err := Run(context.Background(), nil, Env{Stdout: &n.stdout, Stderr: &n.stderr, Root: n.root, Signal: &opts,
		TokenCache: dir, Environ: []string{"PATH=" + agent.Dir(t), "OS_CONFIG_FILES=" + n.md}})
	if err != nil {
		t.Fatalf("run %d: %v\n%s", run, err, n.stderr.String())
	}
}
