package heatapi_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/heatapi"
)

// cloud is Keystone under /identity/ and Heat under /heat/v1/pid.
type cloud struct {
	srv *httptest.Server
	ks  *keystonetest.Server
	mu  sync.Mutex
	got []*http.Request
	// bodies are what Heat got; answers the statuses it gives, in turn.
	bodies  []string
	answers []int
	// stack is deploy_stack_id; location, the Location of the redirect
	// that answers a lookup (GET) of a bare id ("" for none).
	stack    string
	location func(id string) string
}

func newCloud(t *testing.T, answers ...int) *cloud {
	c := &cloud{ks: keystonetest.New("pa55word"), answers: answers, stack: "my-stack/0f1e-uuid"}
	c.location = func(id string) string { return c.srv.URL + "/heat/v1/pid/stacks/my-stack/" + id }
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/heat/") {
			c.ks.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.got, c.bodies = append(c.got, r), append(c.bodies, string(body))
		status := 200
		if len(c.answers) > 0 {
			status, c.answers = c.answers[0], c.answers[1:]
		}
		if status == 200 && !c.ks.Valid(r.Header.Get("X-Auth-Token")) {
			status = 401
		}
		if status == 200 && r.Method == http.MethodGet { // heat-api's stack lookup
			if loc := c.location(strings.TrimPrefix(r.URL.EscapedPath(), "/heat/v1/pid/stacks/")); loc != "" {
				w.Header().Set("Location", loc)
			}
			status = http.StatusFound
		}
		w.WriteHeader(status)
		if status != 200 {
			io.WriteString(w, `{"explanation": "no", "code": 400, "error": {"message": "The Stack (st) could not be found.", "type": "EntityNotFound"}, "title": "Not Found"}`)
		}
	}))
	t.Cleanup(c.srv.Close)
	c.ks.BaseURL = c.srv.URL
	c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
	return c
}

func (c *cloud) deployment(t *testing.T, region string) *deployment.Deployment {
	t.Helper()
	regionInput := ""
	if region != "absent" {
		regionInput = `, {"name": "deploy_region_name", "value": ` + region + `}`
	}
	d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "inputs": [
		{"name": "deploy_auth_url", "value": "` + c.srv.URL + `/identity/v3"},
		{"name": "deploy_user_id", "value": "uid"}, {"name": "deploy_password", "value": "pa55word"},
		{"name": "deploy_project_id", "value": "pid"}, {"name": "deploy_stack_id", "value": "` + c.stack + `"},
		{"name": "deploy_resource_name", "value": "my res/1"}` + regionInput + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var opts = signal.Options{Budget: time.Second, Transports: signal.Transports{heatapi.Transport}}

func data() jsondoc.Value {
	o := jsondoc.NewObject(2)
	o.Set("deploy_stdout", "ok")
	o.Set("deploy_status_code", jsondoc.Int(0))
	return o
}

// §5 test_notify_heat_signal(_no_region, _unknown_region): the region
// filters the catalog when given; absent or null, any region will do.
func TestHeatSignal(t *testing.T) {
	for _, region := range []string{`"RegionOne"`, "absent", "null", `"null"`, `""`} {
		t.Run(region, func(t *testing.T) {
			c := newCloud(t)
			kinds, err := signal.Send(context.Background(), c.deployment(t, region), data(), opts)
			if err != nil || len(kinds) != 1 || kinds[0] != heatapi.Kind {
				t.Fatalf("%v %v", kinds, err)
			}
			if len(c.got) != 1 {
				t.Fatalf("%d requests to Heat", len(c.got))
			}
			r := c.got[0]
			if r.Method != "POST" || r.URL.EscapedPath() != "/heat/v1/pid/stacks/my-stack/0f1e-uuid/resources/my%20res%2F1/signal" {
				t.Errorf("%s %s", r.Method, r.URL.EscapedPath())
			}
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json" || r.Header.Get("X-Auth-Token") == "" {
				t.Errorf("headers %v", r.Header)
			}
			if c.bodies[0] != `{"deploy_stdout": "ok", "deploy_status_code": 0}` {
				t.Errorf("body %s", c.bodies[0])
			}
		})
	}
}

func TestHeatSignalFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		region  string
		answers []int
		wantErr string // "" for success
		wantN   int
	}{
		{"unknown region", `"RegionTwo"`, nil, "no public orchestration endpoint in region RegionTwo", 0},
		{"a refused token is replaced once", "absent", []int{401}, "", 2},
		{"503 then 200", "absent", []int{503}, "", 2},
		{"404 is final", "absent", []int{404}, "HTTP 404 Not Found: The Stack (st) could not be found.", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t, tc.answers...)
			_, err := signal.Send(context.Background(), c.deployment(t, tc.region), data(), opts)
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if len(c.got) != tc.wantN {
				t.Errorf("%d requests to Heat, want %d", len(c.got), tc.wantN)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	c := newCloud(t)
	c.ks.Password = "other"
	_, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), opts)
	if err == nil || !strings.Contains(err.Error(), "keystone authentication") || strings.Contains(err.Error(), "pa55word") {
		t.Fatalf("got %v", err)
	}
}

// A Keystone answer that cannot be used (an error page under 200, a
// body cut short) is asked again within the budget: it used to end the
// signal at once. A refusal (401) is final at once.
func TestUnusableKeystoneAnswerIsAskedAgain(t *testing.T) {
	for _, tc := range []struct {
		name       string
		garble     func(w http.ResponseWriter)
		password   string
		wantTokens int
		wantErr    string
	}{
		{"error page under 200", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><h1>502 Bad Gateway</h1></html>")
		}, "pa55word", 2, ""},
		{"body cut short", func(w http.ResponseWriter) {
			conn, rw, _ := w.(http.Hijacker).Hijack()
			defer conn.Close()
			rw.WriteString("HTTP/1.1 201 Created\r\nX-Subject-Token: tok-x\r\nContent-Length: 500\r\n\r\n{\"token\": {")
			rw.Flush()
		}, "pa55word", 2, ""},
		{"wrong password", nil, "other", 1, "status 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			c.ks.Password = tc.password
			var mu sync.Mutex
			tokens := 0
			inner := c.srv.Config.Handler
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/identity/v3/auth/tokens" {
					mu.Lock()
					tokens++
					first := tokens == 1
					mu.Unlock()
					if first && tc.garble != nil {
						tc.garble(w)
						return
					}
				}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			c.srv = front
			c.ks.BaseURL = front.URL
			c.ks.SetCatalog(map[string]string{"orchestration": front.URL + "/heat/v1/pid"})
			o := opts
			o.Budget = 5 * time.Second
			var log bytes.Buffer
			o.Log = slog.New(slog.NewTextHandler(&log, nil))
			_, err := signal.Send(context.Background(), c.deployment(t, "absent"), data(), o)
			if (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			// Each retry is one WARNING line, without the password.
			if n := strings.Count(log.String(), "level=WARN msg=\"HEAT_SIGNAL: Keystone's answer could not be used (attempt 1: "); n != tc.wantTokens-1 ||
				strings.Contains(log.String(), tc.password) {
				t.Errorf("log:\n%s", log.String())
			}
			mu.Lock()
			defer mu.Unlock()
			c.mu.Lock()
			defer c.mu.Unlock()
			if signals := len(c.got); tokens != tc.wantTokens || signals != tc.wantTokens-1 {
				t.Fatalf("%d token requests, %d signals; want %d, %d", tokens, signals, tc.wantTokens, tc.wantTokens-1)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"the_resource": "the_resource", "a b/c": "a%20b%2Fc", "x.y-z~": "x.y-z~", "é:@&=+$,;": "%C3%A9%3A%40%26%3D%2B%24%2C%3B",
	} {
		if got := heatapi.Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}
