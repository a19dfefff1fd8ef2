package cfn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

const secretKey = "S3CRET-key"

// server is a heat-api-cfn stand-in that checks every request's signature
// (computed by SignV2, itself checked against keystoneclient below) and
// answers DescribeStackResource from resources (name -> Metadata JSON).
type server struct {
	mu        sync.Mutex
	resources map[string]string
	requests  []string
	status    int    // non-zero: answer this instead
	body      string // non-empty: answer this instead
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.URL.RawQuery)
	if s.status != 0 {
		w.WriteHeader(s.status)
		return
	}
	if s.body != "" {
		w.Write([]byte(s.body))
		return
	}
	q := r.URL.Query()
	var params [][2]string
	for k := range q {
		if k != "Signature" {
			params = append(params, [2]string{k, q.Get(k)})
		}
	}
	if want := SignV2(secretKey, r.Method, r.Host, r.URL.Path, params); q.Get("Signature") != want || q.Get("AWSAccessKeyId") != "AKID" {
		http.Error(w, "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code></Error></ErrorResponse>", http.StatusForbidden)
		return
	}
	md, ok := s.resources[q.Get("LogicalResourceId")]
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	fmt.Fprintf(w, `<DescribeStackResourceResponse><DescribeStackResourceResult><StackResourceDetail>`+
		`<Description>x</Description><LogicalResourceId>%s</LogicalResourceId><Metadata>%s</Metadata>`+
		`<ResourceStatus>CREATE_COMPLETE</ResourceStatus></StackResourceDetail></DescribeStackResourceResult></DescribeStackResourceResponse>`,
		q.Get("LogicalResourceId"), html.EscapeString(md))
}

func newCollector(t testing.TB, url string, log *bytes.Buffer, paths ...string) *Collector {
	t.Helper()
	client, err := httpclient.New(httpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Collector{
		Config: Config{MetadataURL: url, StackName: "overcloud-Controller-0.x", AccessKeyID: "AKID", SecretAccessKey: secretKey,
			Paths: paths, DeploymentKeys: []string{"deployments"}},
		Client: client,
		Log:    slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func keys(t *testing.T, c *Collector) ([]string, []string) {
	t.Helper()
	entries, err := c.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n, v []string
	for _, e := range entries {
		n = append(n, e.Name)
		v = append(v, jsondoc.Dumps(e.Content))
	}
	return n, v
}

// Every path is signed correctly, not only the first (the reference
// reused its HMAC); fields merge; sub-keys descend; deployments explode.
func TestCollectSeveralPaths(t *testing.T) {
	srv := &server{resources: map[string]string{
		"server": `{"deployments": [{"name": "d1", "group": "os-apply-config", "config": {"k": 1}}, {"name": "d2", "group": "script", "config": "x"}], "a": 1}`,
		"other":  `{"nested": {"deep": {"b": 2, "a": "from other"}}}`,
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var log bytes.Buffer
	c := newCollector(t, ts.URL+"/v1/", &log, "server.Metadata", "other.Metadata.nested.deep")
	n, v := keys(t, c)
	if strings.Join(n, " ") != "cfn d1" {
		t.Fatalf("keys %v", n)
	}
	if !strings.Contains(v[0], `"a": "from other"`) || !strings.Contains(v[0], `"b": 2`) || v[1] != `{"k": 1}` {
		t.Fatalf("values %v", v)
	}
	if len(srv.requests) != 2 || !strings.HasPrefix(srv.requests[0], "Action=DescribeStackResource&StackName=overcloud-Controller-0.x&LogicalResourceId=server&AWSAccessKeyId=AKID&SignatureVersion=2&SignatureMethod=HmacSHA256&Signature=") {
		t.Fatalf("requests %q", srv.requests)
	}
	if strings.Contains(log.String(), secretKey) {
		t.Fatalf("the secret in the log: %s", log.String())
	}
}

func TestNotConfigured(t *testing.T) {
	dir := t.TempDir()
	hint := filepath.Join(dir, "cfn-metadata-server")
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		log    string
	}{
		{"no url, no hint", func(c *Config) { c.MetadataURL, c.HintFile = "", filepath.Join(dir, "none") }, "No metadata_url configured."},
		{"no key id", func(c *Config) { c.AccessKeyID = "" }, "No Access Key ID configured."},
		{"no secret", func(c *Config) { c.SecretAccessKey = "" }, "No Secret Access Key configured."},
		{"no path", func(c *Config) { c.Paths = nil }, "No path configured"},
		{"bad path", func(c *Config) { c.Paths = []string{"server.Metadata", "MyResource"} }, "Path not in format resource.field[.x.y] (MyResource)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &server{resources: map[string]string{"server": `{}`}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			var log bytes.Buffer
			c := newCollector(t, ts.URL+"/v1/", &log, "server.Metadata")
			tc.change(&c.Config)
			if _, err := c.Collect(context.Background()); !errors.Is(err, collectors.ErrNotConfigured) || !strings.Contains(log.String(), tc.log) {
				t.Fatalf("err %v, log %s", err, log.String())
			}
		})
	}
	// The hint file gives the URL when metadata_url is unset.
	srv := &server{resources: map[string]string{"server": `{"via": "hint"}`}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	os.WriteFile(hint, []byte(ts.URL+"\n"), 0o644)
	var log bytes.Buffer
	c := newCollector(t, "", &log, "server.Metadata")
	c.Config.HintFile = hint
	if _, v := keys(t, c); v[0] != `{"via": "hint"}` {
		t.Fatalf("values %v", v)
	}
}

// A broken or lying server makes the source unavailable with a cause
// naming the path (the loop logs it), never a crash, and never a secret
// or signature in the cause or the log.
func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  *server
		path string
		log  string
	}{
		{"forbidden", &server{status: 403}, "server.Metadata", "403 Forbidden for url: "},
		{"server error", &server{status: 500}, "server.Metadata", "500 Internal Server Error"},
		{"not xml", &server{body: "{}"}, "server.Metadata", "The answer for server.Metadata is not XML."},
		{"xml without detail", &server{body: "<DescribeStackResourceResponse/>"}, "server.Metadata", "has no DescribeStackResourceResult/StackResourceDetail"},
		{"missing field", &server{resources: map[string]string{"server": "{}"}}, "server.Nope", "Path server.Nope does not exist."},
		{"bad json", &server{resources: map[string]string{"server": "{nope"}}, "server.Metadata", "Path server.Metadata failed to parse as json."},
		{"missing sub-key", &server{resources: map[string]string{"server": `{"a": {}}`}}, "server.Metadata.a.b", "Sub-key b does not exist. (server.Metadata.a.b)"},
		{"sub-key of a list", &server{resources: map[string]string{"server": `{"a": [1]}`}}, "server.Metadata.a.b", "Sub-key b does not exist."},
		{"not an object", &server{resources: map[string]string{"server": `[1, 2]`}}, "server.Metadata", "Path server.Metadata is not a JSON object."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.srv)
			defer ts.Close()
			var log bytes.Buffer
			c := newCollector(t, ts.URL+"/v1/", &log, tc.path)
			_, err := c.Collect(context.Background())
			if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(collectors.Cause(err).Error(), tc.log) {
				t.Fatalf("err %v, log %s", err, log.String())
			}
			if said := log.String() + err.Error(); strings.Contains(said, secretKey) || strings.Contains(said, "Signature=") {
				t.Fatalf("a secret in the log or the cause: %s", said)
			}
		})
	}
}

// The signature is keystoneclient's Ec2Signer (what heat-api-cfn checks
// through keystone), with a fresh signer per request.
func TestSignV2AgainstKeystoneclient(t *testing.T) {
	difftest.Oracle(t)
	py := "/usr/bin/python3"
	check := exec.Command(py, "-c", "from keystoneclient.contrib.ec2 import utils")
	if err := check.Run(); err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("keystoneclient is not installed: %v", err)
		}
		t.Skip("keystoneclient is not installed")
	}
	cases := []struct {
		Host, Path string
		Params     map[string]string
	}{
		{"127.0.0.1:8000", "/v1/", map[string]string{"Action": "DescribeStackResource", "StackName": "my.stack", "LogicalResourceId": "MyRes", "AWSAccessKeyId": "AKID", "SignatureVersion": "2"}},
		{"heat.example:8000", "/v1/", map[string]string{"Action": "DescribeStackResource", "StackName": "a b/c~d*e+f%é", "LogicalResourceId": "Res-1_x", "AWSAccessKeyId": "0123456789abcdef", "SignatureVersion": "2"}},
		{"[::1]:8000", "/some/path/v1/", map[string]string{"Action": "DescribeStackResource", "LogicalResourceId": "server", "AWSAccessKeyId": "K", "SignatureVersion": "2"}},
	}
	in, _ := json.Marshal(cases)
	script := `
import json, sys
from keystoneclient.contrib.ec2 import utils
for c in json.load(sys.stdin):
    print(utils.Ec2Signer(secret_key='` + secretKey + `').generate({'params': c['Params'], 'verb': 'GET', 'host': c['Host'], 'path': c['Path']}))
`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	for i, c := range cases {
		var params [][2]string
		for k, v := range c.Params {
			params = append(params, [2]string{k, v})
		}
		params = append(params, [2]string{"SignatureMethod", "HmacSHA256"}) // the signer adds it
		if got := SignV2(secretKey, "GET", c.Host, c.Path, params); got != want[i] {
			t.Errorf("case %d: %s, keystoneclient %s", i, got, want[i])
		}
	}
}
