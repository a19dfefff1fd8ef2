package notify_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/tripleo-go/agent/internal/deadline"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
	"github.com/tripleo-go/agent/signal/notify"
)

// cloud is Keystone (/identity/), Heat (/heat/v1/pid) and pre-signed
// URLs (/url/...) on one server, recording every request but Keystone's.
type cloud struct {
	srv *httptest.Server
	ks  *keystonetest.Server
	mu  sync.Mutex
	got []string // "METHOD /request/uri content-type body"
	// status answers every recorded request (200 when zero).
	status int
}

func newCloud(t testing.TB, status int) *cloud {
	c := &cloud{ks: keystonetest.New("pa55word"), status: status}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/identity") {
			c.ks.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.got = append(c.got, fmt.Sprintf("%s %s %s %s", r.Method, r.RequestURI, r.Header.Get("Content-Type"), body))
		if strings.HasPrefix(r.URL.Path, "/heat/") && !c.ks.Valid(r.Header.Get("X-Auth-Token")) {
			w.WriteHeader(401)
			return
		}
		if c.status == 0 && r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/heat/") { // a stack lookup
			w.Header().Set("Location", c.srv.URL+"/heat/v1/pid/stacks/stk/"+strings.TrimPrefix(r.URL.Path, "/heat/v1/pid/stacks/"))
			w.WriteHeader(http.StatusFound)
			return
		}
		if c.status != 0 {
			w.WriteHeader(c.status)
			fmt.Fprintf(w, "echo of the request: %s?%s", r.URL.Path, r.URL.RawQuery) // a careless server
		}
	}))
	t.Cleanup(c.srv.Close)
	c.ks.BaseURL = c.srv.URL
	c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
	return c
}

func (c *cloud) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// heatInputs are HEAT_SIGNAL's inputs, region as JSON text ("" for none).
func (c *cloud) heatInputs(region string) string { return c.heatInputsFor("stk/cccc", region) }

// heatInputsFor are HEAT_SIGNAL's inputs with deploy_stack_id stack.
func (c *cloud) heatInputsFor(stack, region string) string {
	s := `{"name": "deploy_auth_url", "value": "` + c.srv.URL + `/identity/v3"}, {"name": "deploy_user_id", "value": "uid"},
		{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "pid"},
		{"name": "deploy_stack_id", "value": "` + stack + `"}, {"name": "deploy_resource_name", "value": "the_resource"}`
	if region != "" {
		s += `, {"name": "deploy_region_name", "value": ` + region + `}`
	}
	return s
}

// writeDeployment writes a deployment file with inputs (JSON text).
func writeDeployment(t testing.TB, inputs string) string {
	path := filepath.Join(t.TempDir(), "5555.json")
	doc := `{"id": "5555", "group": "script", "config": "five", "inputs": [` + inputs + `]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs the program; it returns the exit status and stderr.
func run(t *testing.T, stdin string, env []string, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	now := func() time.Time { return time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC) }
	err := notify.Run(context.Background(), args, notify.Env{Stdin: strings.NewReader(stdin), Stderr: &stderr,
		Environ: append(env, deadline.NotifyRetryVar+"=1"), Now: now}) // the first wins
	return exitcode.Of(err), stderr.String()
}

const prefix = "[2026-11-25 10:00:00,000] (heat-config-notify) "

// The rows of the reference's tests (tests/test_heat_config_notify.py),
// and NO_SIGNAL. The heat signal rows' deploy_stack_id is the
// reference's bare "cccc": it is looked up first (GET, answered by a
// redirect to stk/cccc), as python-heatclient does; "stk/cccc", as Heat
// writes it, is signalled at once.
func TestReferenceRows(t *testing.T) {
	c := newCloud(t, 0)
	url := `{"name": "deploy_signal_id", "value": "` + c.srv.URL + `/url/foo"}`
	put := url + `, {"name": "deploy_signal_verb", "value": "PUT"}`
	missing := filepath.Join(t.TempDir(), "missing.json")
	heatReq := `POST /heat/v1/pid/stacks/stk/cccc/resources/the_resource/signal application/json {"foo": "bar"}`
	lookup := "GET /heat/v1/pid/stacks/cccc  "
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantReqs []string
		wantLog  string
	}{
		{"missing file", []string{missing}, `{"foo": "bar"}`, 1, nil,
			prefix + "[ERROR] No config file " + missing + "\n" + prefix + "[ERROR] Usage:\n  heat-config-notify /path/to/config.json < /path/to/signal_data.json\n"},
		{"missing file arg", nil, `{"foo": "bar"}`, 1, nil,
			prefix + "[ERROR] Usage:\n  heat-config-notify /path/to/config.json < /path/to/signal_data.json\n"},
		{"signal id", []string{writeDeployment(t, url)}, `{"foo": "bar"}`, 0,
			[]string{`POST /url/foo application/json {"foo": "bar"}`}, prefix + "[DEBUG] Signaling to " + c.srv.URL + "/url/foo via POST\n"},
		{"signal id, PUT", []string{writeDeployment(t, put)}, `{"foo": "bar"}`, 0,
			[]string{`PUT /url/foo application/json {"foo": "bar"}`}, "Response <Response [200]> \n"},
		{"signal id, empty data", []string{writeDeployment(t, url)}, ``, 0,
			[]string{`POST /url/foo application/json {}`}, prefix + "[WARNING] No valid json found on stdin\n"},
		{"signal id, invalid json data", []string{writeDeployment(t, url)}, `{{`, 0,
			[]string{`POST /url/foo application/json {}`}, prefix + "[WARNING] No valid json found on stdin\n"},
		{"heat signal", []string{writeDeployment(t, c.heatInputsFor("cccc", `"RegionOne"`))}, `{"foo": "bar"}`, 0, []string{lookup, heatReq}, "Signalling to " + c.srv.URL + "/heat/v1/pid/\n"},
		{"heat signal, no region", []string{writeDeployment(t, c.heatInputsFor("cccc", ""))}, `{"foo": "bar"}`, 0, []string{lookup, heatReq}, prefix + "[DEBUG] Stack cccc is stk/cccc\n"},
		{"heat signal, null region", []string{writeDeployment(t, c.heatInputsFor("cccc", "null"))}, `{"foo": "bar"}`, 0, []string{lookup, heatReq}, ""},
		{"heat signal, name/id", []string{writeDeployment(t, c.heatInputs(`"RegionOne"`))}, `{"foo": "bar"}`, 0, []string{heatReq}, ""},
		{"no signal", []string{writeDeployment(t, `{"name": "deploy_signal_transport", "value": "NO_SIGNAL"}`)}, `{"foo": "bar"}`, 0, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.mu.Lock()
			c.got = nil
			c.mu.Unlock()
			code, log := run(t, tc.stdin, nil, tc.args...)
			if code != tc.wantCode || !strings.Contains(log, tc.wantLog) {
				t.Fatalf("status %d, log:\n%s\nwant status %d, log with:\n%s", code, log, tc.wantCode, tc.wantLog)
			}
			if got := c.requests(); fmt.Sprint(got) != fmt.Sprint(tc.wantReqs) {
				t.Fatalf("requests %q, want %q", got, tc.wantReqs)
			}
		})
	}
}

// A ZAQAR_SIGNAL deployment also carries deploy_auth_url: it goes to the
// queue only.
func TestZaqarSignal(t *testing.T) {
	z := zaqartest.New("q1", "pa55word")
	defer z.Close()
	c := newCloud(t, 0)
	z.KS.SetCatalog(map[string]string{"messaging": z.Srv.URL + "/zaqar", "orchestration": c.srv.URL + "/heat/v1/pid"})
	path := writeDeployment(t, `{"name": "deploy_auth_url", "value": "`+z.AuthURL()+`"}, {"name": "deploy_user_id", "value": "uid"},
		{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "pid"},
		{"name": "deploy_stack_id", "value": "stk/cccc"}, {"name": "deploy_resource_name", "value": "r"},
		{"name": "deploy_queue_id", "value": "q1"}`)
	code, log := run(t, `{"deploy_status_code": 0}`, nil, path)
	if code != 0 || len(z.Posted()) != 1 || string(z.Posted()[0].Body) != `{"deploy_status_code": 0}` || len(c.requests()) != 0 {
		t.Fatalf("status %d, posted %v, heat got %v, log:\n%s", code, z.Posted(), c.requests(), log)
	}
	if !strings.Contains(log, "[DEBUG] Signaling to queue q1\n") {
		t.Errorf("log:\n%s", log)
	}
}

// The reference exited 0 whatever the URL answered; a final failure is
// now status 1 and one ERROR line with the status.
func TestFinalFailureIsOneLine(t *testing.T) {
	c := newCloud(t, 500)
	path := writeDeployment(t, `{"name": "deploy_signal_id", "value": "`+c.srv.URL+`/url/foo"}`)
	code, log := run(t, `{}`, nil, path)
	var errors []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "[ERROR]") {
			errors = append(errors, l)
		}
	}
	if code != 1 || len(errors) != 1 || !strings.Contains(errors[0], "[ERROR] Signal failed: CFN_SIGNAL: POST "+c.srv.URL+"/url/foo: HTTP 500 Internal Server Error (after ") {
		t.Fatalf("status %d, error lines %q", code, errors)
	}
	if n := len(c.requests()); n < 2 {
		t.Fatalf("%d requests: not retried", n)
	}
}

// A bare stack id that heat-api does not know: one ERROR line naming the
// id and what heat-api answered, exit 1, and no signal sent.
func TestStackLookupFailureIsOneLine(t *testing.T) {
	c := newCloud(t, 404)
	code, log := run(t, `{}`, nil, writeDeployment(t, c.heatInputsFor("cccc", "")))
	var errors []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "[ERROR]") {
			errors = append(errors, l)
		}
	}
	want := `[ERROR] Signal failed: HEAT_SIGNAL: looking up stack "cccc": GET ` + c.srv.URL + "/heat/v1/pid/stacks/cccc: HTTP 404 Not Found"
	if code != 1 || len(errors) != 1 || !strings.Contains(errors[0], want) {
		t.Fatalf("status %d, error lines %q, want one with %q", code, errors, want)
	}
	if got := c.requests(); len(got) != 1 || !strings.HasPrefix(got[0], "GET ") {
		t.Errorf("requests %q, want the lookup alone", got)
	}
}

func TestRetryTimeoutVariable(t *testing.T) {
	c := newCloud(t, 503)
	path := writeDeployment(t, `{"name": "deploy_signal_id", "value": "`+c.srv.URL+`/url/foo"}`)
	for _, tc := range []struct {
		value   string
		maxReqs int
		warn    bool
	}{{"0", 1, false}, {"0.5", 100, false}, {"500ms", 100, false}, {"soon", 0, true}} {
		c.mu.Lock()
		c.got = nil
		c.mu.Unlock()
		if tc.value == "soon" { // the default budget: too long to wait for, so only the warning
			var stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			err := notify.Run(ctx, []string{path}, notify.Env{Stdin: strings.NewReader("{}"), Stderr: &stderr,
				Environ: []string{deadline.NotifyRetryVar + "=soon"}})
			cancel()
			if exitcode.Of(err) != exitcode.Terminated || !strings.Contains(stderr.String(), `Ignoring HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT="soon"`) {
				t.Errorf("%v, log:\n%s", err, stderr.String())
			}
			continue
		}
		start := time.Now()
		code, log := run(t, "{}", []string{deadline.NotifyRetryVar + "=" + tc.value}, path)
		if n := len(c.requests()); code != 1 || n > tc.maxReqs || time.Since(start) > 2*time.Second {
			t.Errorf("%s: status %d, %d requests in %v, log:\n%s", tc.value, code, n, time.Since(start), log)
		}
	}
}

// No secret reaches a log line, DEBUG included: not the password, not a
// token, not a signature or TempURL signature, even from a server that
// echoes them or from failures.
func TestNoSecretInTheLog(t *testing.T) {
	const sig, tempSig, keyID = "c2lnbmF0dXJlX3NlY3JldA%3D%3D", "9f8e7d6c5b4a", "AKIAKEYID0001"
	for _, status := range []int{0, 401, 403, 500} {
		c := newCloud(t, status)
		z := zaqartest.New("q1", "pa55word")
		defer z.Close()
		cfn := c.srv.URL + "/url/v1/signal/arn%3Aopenstack%3Aheat%3A%3At%3Astacks/s/u/resources/r?Timestamp=2026-11-25T09%3A00%3A00Z&AWSAccessKeyId=" + keyID + "&Signature=" + sig
		temp := c.srv.URL + "/url/v1/AUTH_p/c/o?temp_url_sig=" + tempSig + "&temp_url_expires=2000000000"
		creds := func(authURL string) string {
			return `{"name": "deploy_auth_url", "value": "` + authURL + `"}, {"name": "deploy_user_id", "value": "uid"},
				{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "pid"}`
		}
		var all strings.Builder
		for _, inputs := range []string{
			`{"name": "deploy_signal_id", "value": "` + cfn + `"}`,
			`{"name": "deploy_signal_id", "value": "` + temp + `"}, {"name": "deploy_signal_verb", "value": "PUT"}`,
			c.heatInputs(`"RegionOne"`),
			creds(z.AuthURL()) + `, {"name": "deploy_queue_id", "value": "q1"}`,
			strings.Replace(c.heatInputs(""), "pid", "wrong-project", 1),
		} {
			_, log := run(t, `{"deploy_stdout": "done"}`, []string{deadline.NotifyRetryVar + "=0.3"}, writeDeployment(t, inputs))
			all.WriteString(log)
		}
		log := all.String()
		if !strings.Contains(log, "[DEBUG] Signaling to") {
			t.Fatalf("no DEBUG lines:\n%s", log)
		}
		for _, secret := range []string{"pa55word", sig, "c2lnbmF0dXJlX3NlY3JldA", tempSig, keyID, "tok-"} {
			if strings.Contains(log, secret) {
				t.Errorf("status %d: %q in the log:\n%s", status, secret, log)
			}
		}
		if status == 401 && !strings.Contains(log, "auth_ttl") {
			t.Errorf("401 on a CFN URL without the auth_ttl hint:\n%s", log)
		}
	}
}

// cancelOn is a stderr that cancels the run when a line holds a text.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	text   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.text != "" && bytes.Contains(p, []byte(c.text)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

// A stop (SIGTERM cancels the context in main) is one WARNING line
// saying where the signal stood, not "context canceled", and exit 143;
// each retry before it was one line.
func TestStopSaysStopped(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Retry-After", "30") // waited for in full: the stop comes first
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	path := writeDeployment(t, `{"name": "deploy_signal_id", "value": "`+srv.URL+`/url/foo?Signature=s3cr3t"}`)
	for _, tc := range []struct {
		name, stopAt, want string
		wantRequests       int
	}{
		{"before", "", "stopped before the signal was sent (CFN_SIGNAL)", 0},
		{"while retrying", "failed (attempt 1: HTTP 503 Service Unavailable); next try in 30.0s, ",
			"stopped while retrying, after 1 failed attempt (CFN_SIGNAL)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			requests = 0
			mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.stopAt == "" {
				cancel()
			}
			stderr := &cancelOn{text: tc.stopAt, cancel: cancel}
			err := notify.Run(ctx, []string{path}, notify.Env{Stdin: strings.NewReader("{}"), Stderr: stderr,
				Environ: []string{deadline.NotifyRetryVar + "=3600"}})
			log := stderr.buf.String()
			var warnings []string
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, "stopped") {
					warnings = append(warnings, l)
				}
			}
			if exitcode.Of(err) != exitcode.Terminated || len(warnings) != 1 || !strings.HasSuffix(warnings[0], "[WARNING] heat-config-notify "+tc.want) ||
				strings.Contains(log, "context canceled") || strings.Contains(log, "[ERROR]") || strings.Contains(log, "s3cr3t") {
				t.Fatalf("exit %d, log:\n%s", exitcode.Of(err), log)
			}
			mu.Lock()
			defer mu.Unlock()
			if requests != tc.wantRequests {
				t.Errorf("%d requests, want %d", requests, tc.wantRequests)
			}
		})
	}
}

// The case: a server that never answers, a retry budget of 1 s
// and the default 60 s per attempt. The one attempt is cut at the
// budget's end (it ran its 60 s out), and the error names the budget and
// its variable.
func TestServerThatNeverAnswers(t *testing.T) {
	done := make(chan struct{})
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(done) // before Close, which waits for the handler
	path := writeDeployment(t, `{"name": "deploy_signal_id", "value": "`+srv.URL+`/url/foo"}`)
	code, log := run(t, "{}", []string{deadline.NotifyRetryVar + "=1"}, path)
	want := "[ERROR] Signal failed: CFN_SIGNAL: POST " + srv.URL + "/url/foo: context deadline exceeded; retry budget of 1s (HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT) spent"
	if code != exitcode.Failure || !strings.Contains(log, want) {
		t.Fatalf("exit %d, log:\n%s\nwant a line with %s", code, log, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 || strings.Contains(log, "failed (attempt") {
		t.Errorf("%d requests, want 1 and no retry; log:\n%s", requests, log)
	}
}
