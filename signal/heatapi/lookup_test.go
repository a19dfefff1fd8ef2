package heatapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/signal"
)

// requests is what Heat got: "METHOD escaped-path", in order.
func (c *cloud) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.got {
		out = append(out, r.Method+" "+r.URL.EscapedPath())
	}
	return out
}

const signalPath = "/heat/v1/pid/stacks/my-stack/0f1e-uuid/resources/my%20res%2F1/signal"

// A bare stack id (heat-config-notify's reference rows use "cccc") is
// looked up first, as python-heatclient does: GET /stacks/<id>, whose
// redirect names the stack; the signal goes to /stacks/<name>/<id>. The
// Location's path is all that is used: another host (heat-api's own name
// behind a proxy) never gets a request, nor the token. "name/id" needs no
// lookup: one request.
func TestBareStackIDIsLookedUp(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	for _, tc := range []struct {
		name, stack string
		location    func(c *cloud, id string) string // nil: heat-api's own URL
		want        []string
	}{
		{"name/id: no lookup", "my-stack/0f1e-uuid", nil, []string{"POST " + signalPath}},
		{"bare id", "0f1e-uuid", nil, []string{"GET /heat/v1/pid/stacks/0f1e-uuid", "POST " + signalPath}},
		{"Location on another host", "0f1e-uuid", func(_ *cloud, id string) string { return other.URL + "/v1/pid/stacks/my-stack/" + id },
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid", "POST " + signalPath}},
		{"relative Location", "0f1e-uuid", func(_ *cloud, id string) string { return "/heat/v1/pid/stacks/my-stack/" + id },
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid", "POST " + signalPath}},
		{"a stack name", "my-stack", func(*cloud, string) string { return "/heat/v1/pid/stacks/my-stack/0f1e-uuid" },
			[]string{"GET /heat/v1/pid/stacks/my-stack", "POST " + signalPath}},
		{"an id that needs quoting", "a b?c", func(*cloud, string) string { return "/heat/v1/pid/stacks/my-stack/0f1e-uuid" },
			[]string{"GET /heat/v1/pid/stacks/a%20b%3Fc", "POST " + signalPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			c.stack = tc.stack
			if tc.location != nil {
				c.location = func(id string) string { return tc.location(c, id) }
			}
			if _, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), opts); err != nil {
				t.Fatal(err)
			}
			if got := c.requests(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
			if g := c.got[0]; g.Method == http.MethodGet && (g.Header.Get("X-Auth-Token") == "" || g.Header.Get("Accept") != "application/json") {
				t.Errorf("lookup headers %v", g.Header)
			}
			if last := len(c.bodies) - 1; c.bodies[last] != `{"deploy_stdout": "ok", "deploy_status_code": 0}` {
				t.Errorf("signal body %q", c.bodies[last])
			}
			if elsewhere.Load() != 0 {
				t.Errorf("%d requests went to the Location's host", elsewhere.Load())
			}
		})
	}
}

// A lookup that fails is one error naming the stack id, and no signal is
// sent; a refused token is replaced once, and a 5xx retried, as for the
// signal itself.
func TestStackLookupFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answers  []int
		location string // "-" for none
		wantErr  string // "" for success
		want     []string
	}{
		{"not found", []int{404}, "", `looking up stack "0f1e-uuid": GET URL/heat/v1/pid/stacks/0f1e-uuid: HTTP 404 Not Found: The Stack (st) could not be found.`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"no Location", nil, "-", `looking up stack "0f1e-uuid": GET URL/heat/v1/pid/stacks/0f1e-uuid: HTTP 302: no Location in the redirect`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"Location past the stack", nil, "/heat/v1/pid/stacks/my-stack/0f1e-uuid/resources", `the Location "/heat/v1/pid/stacks/my-stack/0f1e-uuid/resources" does not end with /stacks/<name>/<id>`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"Location with dot segments", nil, "http://heat/stacks/../0f1e", `does not end with /stacks/<name>/<id>`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"Location with escaped dots", nil, "/heat/v1/pid/stacks/%2E%2E/0f1e", `does not end with /stacks/<name>/<id>`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"Location with an escaped slash", nil, "/heat/v1/pid/stacks/a%2Fb/0f1e", `does not end with /stacks/<name>/<id>`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"Location without stacks", nil, "http://heat/v1/pid/my-stack/0f1e", `does not end with /stacks/<name>/<id>`,
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid"}},
		{"a refused token is replaced once", []int{401}, "", "",
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid", "GET /heat/v1/pid/stacks/0f1e-uuid", "POST " + signalPath}},
		{"503 then the redirect", []int{503}, "", "",
			[]string{"GET /heat/v1/pid/stacks/0f1e-uuid", "GET /heat/v1/pid/stacks/0f1e-uuid", "POST " + signalPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t, tc.answers...)
			c.stack = "0f1e-uuid"
			switch tc.location {
			case "":
			case "-":
				c.location = func(string) string { return "" }
			default:
				c.location = func(string) string { return tc.location }
			}
			_, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), opts)
			want := strings.ReplaceAll(tc.wantErr, "URL", c.srv.URL)
			if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			if got := c.requests(); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
		})
	}
	// An empty deploy_stack_id asks nothing (GET /stacks/ would list them).
	c := newCloud(t)
	c.stack = ""
	if _, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), opts); err == nil ||
		!strings.Contains(err.Error(), "HEAT_SIGNAL: the deploy_stack_id input is empty") || len(c.requests()) != 0 {
		t.Errorf("empty: %v, requests %q", err, c.requests())
	}
}
