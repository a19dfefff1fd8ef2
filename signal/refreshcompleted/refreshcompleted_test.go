package refreshcompleted

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/tripleo-go/agent/internal/testkit/difftest"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/all"
)

// agent is our os-apply-config, which the program reads keys with.
var agent = difftest.NewSharedAgent("os-apply-config")

func TestMain(m *testing.M) {
	code := m.Run()
	agent.Remove()
	os.Exit(code)
}

// heat records the signals it gets and answers status.
type heat struct {
	mu     sync.Mutex
	got    []string
	status int
}

func (h *heat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
	if h.status != 0 {
		w.WriteHeader(h.status)
	}
}

type node struct {
	t      *testing.T
	root   string
	md     string
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newNode(t *testing.T, metadata map[string]any) *node {
	n := &node{t: t, root: t.TempDir()}
	n.md = filepath.Join(n.root, "md.json")
	b, _ := json.Marshal(metadata)
	os.WriteFile(n.md, b, 0o600)
	return n
}

func (n *node) run() error {
	n.stdout.Reset()
	n.stderr.Reset()
	opts := signal.Options{Budget: -1, Transports: all.Transports}
	return Run(context.Background(), nil, Env{Stdout: &n.stdout, Stderr: &n.stderr, Root: n.root, Signal: &opts,
		Environ: []string{"PATH=" + agent.Dir(n.t), "OS_CONFIG_FILES=" + n.md}})
}

func oacDeployment(id string, inputs ...[2]string) map[string]any {
	var in []any
	for _, kv := range inputs {
		in = append(in, map[string]any{"name": kv[0], "type": "String", "value": kv[1]})
	}
	return map[string]any{"id": id, "group": "os-apply-config", "config": map[string]any{}, "inputs": in}
}

// os-apply-config deployments are signalled once each with the
// reference's body, by their own verb (a TEMP_URL_SIGNAL PUT, which the
// reference could not send); NO_SIGNAL ones and other groups are not;
// no instance-id is needed (the reference did nothing without one, so a
// deployed server's were never signalled).
func TestSignalsOSApplyConfigDeployments(t *testing.T) {
	h := &heat{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := newNode(t, map[string]any{"deployments": []any{
		oacDeployment("cfn", [2]string{"deploy_signal_id", srv.URL + "/v1/signal/arn?Signature=x"}),
		oacDeployment("swift", [2]string{"deploy_signal_id", srv.URL + "/v1/AUTH_p/c/o?temp_url_sig=y"}, [2]string{"deploy_signal_verb", "PUT"}),
		oacDeployment("nosignal", [2]string{"deploy_signal_transport", "NO_SIGNAL"}),
		map[string]any{"id": "script", "group": "script", "inputs": []any{map[string]any{"name": "deploy_signal_id", "value": srv.URL + "/no"}}},
	}})
	if err := n.run(); err != nil {
		t.Fatalf("%v\n%s", err, n.stderr.String())
	}
	want := []string{
		`POST /v1/signal/arn application/json {"deploy_stdout": "os-apply-config deployment cfn completed", "deploy_status_code": "0"}`,
		`PUT /v1/AUTH_p/c/o application/json {"deploy_stdout": "os-apply-config deployment swift completed", "deploy_status_code": "0"}`,
	}
	if strings.Join(h.got, "\n") != strings.Join(want, "\n") {
		t.Errorf("signals:\n%s\nwant:\n%s", strings.Join(h.got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(n.stdout.String()+n.stderr.String(), "Signature=x") || strings.Contains(n.stdout.String(), "temp_url_sig") {
		t.Errorf("a signature in the output:\n%s%s", n.stdout.String(), n.stderr.String())
	}
	for _, id := range []string{"cfn", "swift"} {
		if _, err := os.Stat(filepath.Join(n.root, markerDir, id)); err != nil {
			t.Error(err)
		}
	}
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 2 || !strings.Contains(n.stdout.String(), "Skipping cfn, already deployed\n") {
		t.Errorf("a second run signalled again (%d) or said nothing:\n%s", len(h.got), n.stdout.String())
	}
}

// A refused signal fails the run (os-collect-config then keeps the
// metadata uncommitted and tries again) and leaves no marker.
func TestFailedSignalFailsTheRun(t *testing.T) {
	h := &heat{status: http.StatusForbidden}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := newNode(t, map[string]any{"deployments": []any{oacDeployment("a", [2]string{"deploy_signal_id", srv.URL + "/x"})}})
	if err := n.run(); exitcode.Of(err) != exitcode.Failure {
		t.Fatalf("exit %d", exitcode.Of(err))
	}
	if _, err := os.Stat(filepath.Join(n.root, markerDir, "a")); err == nil {
		t.Error("a marker for a refused signal")
	}
	h.status = 0
	if err := n.run(); err != nil || len(h.got) != 2 {
		t.Errorf("retry: %v, %d requests", err, len(h.got))
	}
}

// The legacy completion handle (PUT) and signal (POST) of old templates
// get the reference's body when the node has an instance-id, and are
// left alone without one.
func TestLegacyCompletionHandles(t *testing.T) {
	h := &heat{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	meta := map[string]any{"completion-handle": srv.URL + "/handle", "completion-signal": srv.URL + "/signal"}
	n := newNode(t, meta)
	if err := n.run(); err != nil || len(h.got) != 0 {
		t.Fatalf("without an instance-id: %v, %q", err, h.got)
	}
	meta["instance-id"] = "i-0001"
	n = newNode(t, meta)
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	body := `{"Status": "SUCCESS", "Reason": "Configuration Complete", "UniqueId": "i-0001", "Data": "Finished os-refresh-config."}`
	want := "PUT /handle application/json " + body + "\nPOST /signal application/json " + body
	if strings.Join(h.got, "\n") != want {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(h.got, "\n"), want)
	}
}

// A hostile os-apply-config deployment is one error line; the others
// are signalled and the run succeeds (retrying would not mend it).
func TestHostileDeploymentIsSkipped(t *testing.T) {
	h := &heat{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	n := newNode(t, map[string]any{"deployments": []any{
		oacDeployment("../../etc/x", [2]string{"deploy_signal_id", srv.URL + "/bad"}),
		oacDeployment("ok", [2]string{"deploy_signal_id", srv.URL + "/ok"}),
	}})
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 1 || !strings.HasPrefix(h.got[0], "POST /ok ") {
		t.Errorf("signals %q", h.got)
	}
	if !strings.Contains(n.stderr.String(), `[ERROR] Skipping deployment 0 '../../etc/x': invalid deployment: id "../../etc/x" holds a slash`) {
		t.Errorf("stderr: %s", n.stderr.String())
	}
}

// cancelOn is a log that cancels a run when a line holds a text.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	text   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes.Contains(p, []byte(c.text)) {
		c.cancel()
	}
	return c.buf.Write(p)
}

// A stop while a signal is retried (SIGTERM, through main) is one line
// saying so, exit 143, no marker, and the next deployment is not tried;
// the failure of a signal is an ERROR line (it was not logged at all).
func TestStopWhileRetryingSaysStopped(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Retry-After", "30") // waited for in full: the stop comes first
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	n := newNode(t, map[string]any{"deployments": []any{
		oacDeployment("a", [2]string{"deploy_signal_id", srv.URL + "/a"}),
		oacDeployment("b", [2]string{"deploy_signal_id", srv.URL + "/b"}),
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := &cancelOn{text: "failed (attempt 1: HTTP 503 Service Unavailable); next try in 30.0s", cancel: cancel}
	opts := signal.Options{Budget: time.Hour, Transports: all.Transports}
	err := Run(ctx, nil, Env{Stdout: &n.stdout, Stderr: log, Root: n.root, Signal: &opts,
		Environ: []string{"PATH=" + agent.Dir(t), "OS_CONFIG_FILES=" + n.md}})
	stderr := log.buf.String()
	if exitcode.Of(err) != exitcode.Terminated {
		t.Fatalf("exit %d, log:\n%s", exitcode.Of(err), stderr)
	}
	if !strings.Contains(stderr, "[WARNING] 99-refresh-completed stopped while retrying, after 1 failed attempt (CFN_SIGNAL) deployment=a\n") ||
		strings.Contains(stderr, "context canceled") || strings.Contains(stderr, "[ERROR]") {
		t.Errorf("log:\n%s", stderr)
	}
	if len(got) != 1 || got[0] != "/a" {
		t.Errorf("requests %q, want /a once", got)
	}
	if _, err := os.Stat(filepath.Join(n.root, markerDir, "a")); err == nil {
		t.Error("a marker for a stopped signal")
	}
}

// A signal that fails is an ERROR line naming it.
func TestFailedSignalIsLogged(t *testing.T) {
	srv := httptest.NewServer(&heat{status: http.StatusForbidden})
	defer srv.Close()
	n := newNode(t, map[string]any{"deployments": []any{oacDeployment("a", [2]string{"deploy_signal_id", srv.URL + "/x?Signature=s3cr3t"})}})
	if err := n.run(); exitcode.Of(err) != exitcode.Failure {
		t.Fatalf("exit %d", exitcode.Of(err))
	}
	if !strings.Contains(n.stderr.String(), "[ERROR] Signal failed: CFN_SIGNAL: POST "+srv.URL+"/x: HTTP 403 Forbidden") || strings.Contains(n.stderr.String(), "s3cr3t") {
		t.Errorf("log:\n%s", n.stderr.String())
	}
}
