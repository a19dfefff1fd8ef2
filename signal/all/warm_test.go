package all_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/signal/all"
)

// A warm-up is there for the ways that authenticate with Keystone
// (HEAT_SIGNAL, ZAQAR_SIGNAL, beside a pre-signed URL too), and only
// with a token cache: its work is one authentication, kept in the
// cache, which a second warm-up finds.
func TestWarmup(t *testing.T) {
	ks := keystonetest.New("pa55word")
	srv := httptest.NewServer(ks)
	t.Cleanup(srv.Close)
	ks.BaseURL = srv.URL
	user := []string{"deploy_auth_url", strconv.Quote(srv.URL + "/identity/v3"), "deploy_user_id", `"uid"`,
		"deploy_password", `"pa55word"`, "deploy_project_id", `"pid"`}
	heat := append([]string{"deploy_stack_id", `"st/cccc"`, "deploy_resource_name", `"r"`}, user...)
	for _, tc := range []struct {
		name   string
		inputs []string
		cache  bool
		want   bool
	}{
		{"heat", heat, true, true},
		{"heat, no cache", heat, false, false},
		{"zaqar", append([]string{"deploy_queue_id", `"q"`}, user...), true, true},
		{"signal id and heat", append([]string{"deploy_signal_id", `"http://h/x"`}, heat...), true, true},
		{"signal id", []string{"deploy_signal_id", `"http://h/x"`}, true, false},
		{"signal id, PUT", []string{"deploy_signal_id", `"http://h/x"`, "deploy_signal_verb", `"PUT"`}, true, false},
		{"no signal", nil, true, false},
		{"heat, no password: the signal says so", heat[:len(heat)-4], true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			if tc.cache {
				dir = filepath.Join(t.TempDir(), "tokens")
			}
			work := all.Transports.Warmup(dep(t, tc.inputs...), dir, httpclient.Options{})
			if (work != nil) != tc.want {
				t.Fatalf("a warm-up: %v, want %v", work != nil, tc.want)
			}
			if work == nil {
				return
			}
			before := ks.Authentications()
			for range 2 {
				if err := work(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			entries, _ := filepath.Glob(filepath.Join(dir, "token-*.json"))
			if ks.Authentications()-before != 1 || len(entries) != 1 {
				t.Errorf("%d authentications, cache %v; want 1 and one entry", ks.Authentications()-before, entries)
			}
		})
	}
	t.Run("refused, without the password", func(t *testing.T) {
		wrong := append(append([]string{}, heat[:len(heat)-4]...), "deploy_password", `"wr0ngpass"`, "deploy_project_id", `"pid"`)
		err := all.Transports.Warmup(dep(t, wrong...), t.TempDir(), httpclient.Options{})(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), "HEAT_SIGNAL: ") || strings.Contains(err.Error(), "wr0ngpass") {
			t.Errorf("error %v", err)
		}
	})
}

// A warm-up passes over a cached entry whose catalog lacks the
// endpoint its signal will ask for (a region added since) and keeps a
// new one, which the next warm-up takes: one authentication each for a
// region the cached catalog had, for a region it lacked, and none for a
// third, for either way that authenticates.
func TestWarmupPassesOverAStaleCatalog(t *testing.T) {
	for _, way := range []struct{ name, service, input, value string }{
		{"heat", "orchestration", "deploy_stack_id", `"st/cccc"`},
		{"zaqar", "messaging", "deploy_queue_id", `"q"`},
	} {
		t.Run(way.name, func(t *testing.T) {
			ks := keystonetest.New("pa55word")
			srv := httptest.NewServer(ks)
			t.Cleanup(srv.Close)
			ks.BaseURL = srv.URL
			ks.SetCatalog(map[string]string{way.service: srv.URL + "/" + way.name})
			inputs := func(region string) []string {
				return []string{"deploy_auth_url", strconv.Quote(srv.URL + "/identity/v3"), "deploy_user_id", `"uid"`,
					"deploy_password", `"pa55word"`, "deploy_project_id", `"pid"`, "deploy_resource_name", `"r"`,
					way.input, way.value, "deploy_region_name", strconv.Quote(region)}
			}
			dir := filepath.Join(t.TempDir(), "tokens")
			for i, region := range []string{"RegionOne", "RegionTwo", "RegionTwo"} {
				if i == 1 {
					ks.AddEndpoint(keystonetest.Endpoint{Type: way.service, Interface: "public", Region: "RegionTwo", URL: srv.URL + "/" + way.name + "2"})
				}
				if err := all.Transports.Warmup(dep(t, inputs(region)...), dir, httpclient.Options{})(context.Background()); err != nil {
					t.Fatal(err)
				}
				if n, want := ks.Authentications(), min(i+1, 2); n != want {
					t.Errorf("warm-up %d for %s: %d authentications in all, want %d", i+1, region, n, want)
				}
			}
		})
	}
}
