package presigned_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/presigned"
)

// seen is one request a stand-in server got.
type seen struct {
	Method, RequestURI, ContentType, Body string
}

// server answers each request with the next of answers ("503", or
// "429:1" for a Retry-After), the last one for ever after.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	got  []seen
	more []string
}

func newServer(t *testing.T, answers ...string) *server {
	s := &server{more: answers}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, seen{r.Method, r.RequestURI, r.Header.Get("Content-Type"), string(body)})
	a := s.more[0]
	if len(s.more) > 1 {
		s.more = s.more[1:]
	}
	code, after, _ := strings.Cut(a, ":")
	if after != "" {
		w.Header().Set("Retry-After", after)
	}
	switch code {
	case "200":
		w.WriteHeader(200)
	case "401":
		w.WriteHeader(401)
		io.WriteString(w, "<html><h1>Unauthorized</h1><p>This server could not verify that you are authorized.</p></html>")
	default:
		var n int
		for _, c := range code {
			n = n*10 + int(c-'0')
		}
		w.WriteHeader(n)
	}
}

func (s *server) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

var data = func() jsondoc.Value {
	o := jsondoc.NewObject(1)
	o.Set("foo", "bar \u00e9")
	return o
}()

const wantBody = `{"foo": "bar \u00e9"}`

func send(method, url string, budget time.Duration) error {
	return signal.SendTo(context.Background(), presigned.New(method, url), data, signal.Options{Budget: budget})
}

// §8: the URL goes out exactly as given, encoded query and all, with
// content-type application/json and the method asked for.
func TestURLVerbatimMethodAndContentType(t *testing.T) {
	for _, tc := range []struct{ method, path, wantMethod string }{
		{"POST", "/foo?a=1&b=%2F", "POST"},
		{"PUT", "/v1/AUTH_p/c/o?temp_url_sig=0a1b&temp_url_expires=2000000000", "PUT"},
		{"", "/v1/signal/arn%3Aopenstack%3Aheat%3A%3At%3Astacks/s/u/resources/r?Timestamp=2026-01-01T00%3A00%3A00Z&SignatureMethod=HmacSHA256&AWSAccessKeyId=k&SignatureVersion=2&Signature=ab%2Bc%2F%3D", "POST"},
	} {
		s := newServer(t, "200")
		if err := send(tc.method, s.URL+tc.path, time.Second); err != nil {
			t.Fatal(err)
		}
		want := []seen{{tc.wantMethod, tc.path, "application/json", wantBody}}
		if got := s.requests(); len(got) != 1 || got[0] != want[0] {
			t.Errorf("got %+v, want %+v", got, want)
		}
	}
}

// The reference retried a PUT on 5xx but took a POST's 503 as final and
// exited 0; both are retried here, and a failure at the end is an error.
func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		answers      []string
		budget       time.Duration
		wantErr      string // "" for success
		wantN        int    // 0: several
		minTime      time.Duration
	}{
		{"POST 503 then 200", "POST", []string{"503", "200"}, 5 * time.Second, "", 2, 0},
		{"PUT 503 then 200", "PUT", []string{"503", "200"}, 5 * time.Second, "", 2, 0},
		{"POST 503 to the end", "POST", []string{"503"}, time.Second, "HTTP 503 Service Unavailable (after ", 0, 0},
		{"PUT 503 to the end", "PUT", []string{"503"}, time.Second, "HTTP 503 Service Unavailable (after ", 0, 0},
		{"final 500", "POST", []string{"500"}, time.Second, "POST http://", 0, 0},
		{"429 with Retry-After", "POST", []string{"429:1", "200"}, 5 * time.Second, "", 2, time.Second},
		{"404 is final at once", "POST", []string{"404"}, 5 * time.Second, "HTTP 404 Not Found", 1, 0},
		{"no retries with a negative budget", "PUT", []string{"503", "200"}, -1, "HTTP 503", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.answers...)
			start := time.Now()
			err := send(tc.method, s.URL+"/x", tc.budget)
			took, n := time.Since(start), len(s.requests())
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if (tc.wantN != 0 && n != tc.wantN) || (tc.wantN == 0 && n < 2) {
				t.Fatalf("%d requests, want %d", n, tc.wantN)
			}
			if took < tc.minTime || (tc.budget > 0 && took > tc.budget+time.Second) {
				t.Errorf("took %v", took)
			}
			var he *signal.HTTPError
			if err != nil && !errors.As(err, &he) {
				t.Errorf("%v is no HTTPError", err)
			}
		})
	}
}

func TestConnectionRefusedIsRetriedThenFails(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	err := send("POST", "http://"+addr+"/x?Signature=s3cr3tsig", 700*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "attempts)") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "s3cr3tsig") || time.Since(start) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}

// Each attempt has its deadline: a server that never answers costs the
// budget plus one attempt, not for ever.
func TestHangingServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	o := signal.Options{Budget: 300 * time.Millisecond}
	o.HTTP.Timeout = 200 * time.Millisecond
	start := time.Now()
	err := signal.SendTo(context.Background(), presigned.New("POST", srv.URL), data, o)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
}

// A refused CFN URL says why it probably was: the signature is older
// than Keystone's auth_ttl. A refused TempURL gets no such hint.
func TestAuthTTLHint(t *testing.T) {
	s := newServer(t, "401")
	now := time.Date(2026, 1, 1, 0, 47, 0, 0, time.UTC)
	clocked := func(method, url string) *presigned.URL {
		u := presigned.New(method, url)
		u.Now = func() time.Time { return now }
		return u
	}
	cfn := s.URL + "/v1/signal/arn%3Aopenstack%3Aheat%3A%3At%3Astacks/s/u/resources/r?Timestamp=2026-01-01T00%3A00%3A00Z&AWSAccessKeyId=k&Signature=sig"
	err := signal.SendTo(context.Background(), clocked("POST", cfn), data, signal.Options{})
	want := "HTTP 401 Unauthorized: Unauthorized This server could not verify that you are authorized.; the signed URL may have outlived " +
		"Keystone's [credential] auth_ttl (15 minutes by default): it was signed at 2026-01-01T00:00:00Z, 47m0s ago"
	if err == nil || !strings.HasSuffix(err.Error(), want) || len(s.requests()) != 1 {
		t.Fatalf("got %v after %d requests, want ...%s", err, len(s.requests()), want)
	}
	err = signal.SendTo(context.Background(), clocked("PUT", s.URL+"/v1/AUTH_p/c/o?temp_url_sig=x&temp_url_expires=1"), data, signal.Options{})
	if err == nil || strings.Contains(err.Error(), "auth_ttl") {
		t.Fatalf("TempURL: %v", err)
	}
}

// A signal answered 2xx got through, whatever the answer's body does: a
// body cut short (or endless) is no failure, and the signal is not sent
// again (it was, and heat-config-notify exited 1).
func TestAnsweredSignalIsDoneWhateverTheBody(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		conn, rw, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"cut")
		rw.Flush()
	}))
	defer srv.Close()
	if err := send("PUT", srv.URL+"/v1/AUTH_p/c/o?temp_url_sig=0a1b&temp_url_expires=2000000000", 2*time.Second); err != nil {
		t.Fatalf("a 200 with a body cut short: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 1 {
		t.Fatalf("sent %d times", n)
	}
}

// Build reads deploy_signal_id and deploy_signal_verb: a PUT only when
// the verb is exactly that; the query's values but the harmless ones are
// secrets, decoded and as written.
func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		verb, want string
		kind       signal.Kind
	}{{`"PUT"`, "PUT", presigned.TempURL}, {`"put"`, "POST", presigned.CFN}, {`null`, "POST", presigned.CFN}, {``, "POST", presigned.CFN}} {
		s := newServer(t, "200")
		verb := ""
		if tc.verb != "" {
			verb = `, {"name": "deploy_signal_verb", "value": ` + tc.verb + `}`
		}
		d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "inputs": [
			{"name": "deploy_signal_id", "value": "` + s.URL + `/x?Timestamp=t&Signature=ab%2Bc"}` + verb + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		u, err := presigned.Transport.Build(d)
		if err != nil || u.Kind() != tc.kind {
			t.Fatalf("%s: %v %v", tc.verb, u, err)
		}
		if sec := u.Secrets(); !slices.Contains(sec, "ab+c") || !slices.Contains(sec, "ab%2Bc") || slices.Contains(sec, "t") {
			t.Errorf("secrets %q", sec)
		}
		if err := signal.SendTo(context.Background(), u, data, signal.Options{Budget: time.Second}); err != nil {
			t.Fatal(err)
		}
		if got := s.requests(); len(got) != 1 || got[0].Method != tc.want || got[0].RequestURI != "/x?Timestamp=t&Signature=ab%2Bc" {
			t.Errorf("%s: got %+v", tc.verb, got)
		}
	}
}
