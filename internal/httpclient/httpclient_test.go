package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func get(t *testing.T, o Options, url string) (*Response, error) {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Get(ctx, url, nil)
}

func TestTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("{}")) }))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o644)

	if _, err := get(t, Options{}, srv.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unknown CA: got %v, want a certificate error", err)
	}
	if r, err := get(t, Options{CAFile: ca}, srv.URL); err != nil || string(r.Body) != "{}" {
		t.Errorf("with the CA file: %v", err)
	}
	if _, err := get(t, Options{Insecure: true}, srv.URL); err != nil {
		t.Errorf("insecure: %v", err)
	}
	if _, err := New(Options{CAFile: notPEM}); err == nil || !strings.Contains(err.Error(), notPEM) {
		t.Errorf("a CA file without PEM: %v, want an error naming it", err)
	}
	if _, err := New(Options{CAFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing CA file was accepted")
	}
}

func TestRetriesServerErrorsThenGivesTheLastAnswer(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	if r, err := get(t, Options{Retries: 2}, srv.URL); err != nil || r.Status != 200 || n.Load() != 3 {
		t.Fatalf("got %v %v after %d requests", r, err, n.Load())
	}
	n.Store(-10)
	if r, err := get(t, Options{Retries: 1}, srv.URL); err != nil || r.Status != http.StatusBadGateway {
		t.Fatalf("after the last retry: %v %v, want the 502 itself", r, err)
	}
}

// A server that accepts and never answers costs one timeout per attempt,
// not forever.
func TestHangingServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	_, err := get(t, Options{Timeout: 100 * time.Millisecond}, srv.URL+"/x?Signature=s3cr3t")
	if err == nil {
		t.Fatal("no error from a server that never answers")
	}
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), srv.URL+"/x") {
		t.Fatalf("error %q: want the URL without its query", err)
	}
}

func TestBodyCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1001)))
	}))
	defer srv.Close()
	if _, err := get(t, Options{MaxBody: 1000}, srv.URL); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("1001 bytes under a 1000-byte cap: %v", err)
	}
	if r, err := get(t, Options{MaxBody: 1001}, srv.URL); err != nil || len(r.Body) != 1001 {
		t.Fatalf("at the cap: %v", err)
	}
}

// A body over the cap is one line that names the option setting it, by
// Get and by the Standard client alike: what an operator must raise.
func TestBodyCapNamesItsOption(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1001)))
	}))
	defer srv.Close()
	c, _ := New(Options{MaxBody: 1000, MaxBodyOption: "max_metadata_bytes in [DEFAULT]"})
	_, err := c.Get(context.Background(), srv.URL, nil)
	want := "response body over the size limit (1000 bytes, max_metadata_bytes in [DEFAULT])"
	if !errors.Is(err, ErrTooLarge) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Get: %v, want one ending %q", err, want)
	}
	if _, err := c.Standard().Get(srv.URL); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Standard: %v, want one holding %q", err, want)
	}
}

// The answer to a HEAD has no body, whatever length it declares (its
// GET's): reading it under the cap is no error.
func TestHeadAnswerHasNoBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("0123456789"))
	}))
	defer srv.Close()
	c, _ := New(Options{MaxBody: 1000})
	if r, err := c.Do(context.Background(), http.MethodHead, srv.URL, nil, nil); err != nil || r.Status != http.StatusOK || len(r.Body) != 0 {
		t.Fatalf("Do: %+v, %v", r, err)
	}
	resp, err := c.Standard().Head(srv.URL)
	if err != nil {
		t.Fatalf("Standard: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Standard: status %d", resp.StatusCode)
	}
}

// A body that says it is over the cap is refused before it is read: the
// server here sends 10 bytes of the 1 GiB it declares, then nothing.
func TestDeclaredLengthOverTheCapIsNotRead(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.Write([]byte("0123456789"))
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hold)
	o := Options{Timeout: 2 * time.Second, MaxBody: 1 << 20}
	if _, err := get(t, o, srv.URL); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get: %v", err)
	}
	c, _ := New(o)
	if _, err := c.Standard().Get(srv.URL); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Standard: %v", err)
	}
}

// A body of unknown length that runs over the cap costs about the cap in
// memory: io.ReadAll's growing and copying cost 2.4 times as much, and
// a daemon fed 1 GiB peaked at 200 MiB of RSS for a 64 MiB cap.
func TestBodyOverTheCapCostsTheCap(t *testing.T) {
	const max = 8 << 20
	srv := overTheCap(4*max, "")
	defer srv.Close()
	c, _ := New(Options{MaxBody: max})
	var err error
	alloc := allocatedBy(func() { _, err = c.Get(context.Background(), srv.URL, nil) })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get: %v", err)
	}
	if alloc > 3*max/2 {
		t.Fatalf("reading %d MiB over an %d MiB cap allocated %d MiB", 4*max>>20, max>>20, alloc>>20)
	}
}

// overTheCap serves, once, size bytes of "a" after prefix, chunked (no
// length). Its buffer is allocated here, not while the client reads.
func overTheCap(size int, prefix string) *httptest.Server {
	first := bytes.Repeat([]byte("a"), 64<<10)
	copy(first, prefix)
	rest := bytes.Repeat([]byte("a"), len(first))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range size / len(first) {
			chunk := rest
			if i == 0 {
				chunk = first
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
}

// allocatedBy is how many bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Deliver takes a 2xx as done whatever its body does: cut short, a
// gigabyte that never comes, a drip; another answer's body is read, best
// effort and bounded, for its detail.
func TestDeliverTakesA2xxWhateverItsBody(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusCreated
		if r.URL.Path == "/error" {
			status = http.StatusInternalServerError
		}
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.WriteHeader(status)
		w.Write([]byte("the beginning of an answer that never ends"))
		w.(http.Flusher).Flush()
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	c, _ := New(Options{Timeout: time.Second, MaxBody: 1 << 20})
	resp, err := c.Deliver(context.Background(), http.MethodPost, srv.URL+"/ok", nil, []byte("{}"))
	if err != nil || resp.Status != http.StatusCreated || len(resp.Body) != 0 {
		t.Fatalf("2xx: %+v, %v", resp, err)
	}
	resp, err = c.Deliver(context.Background(), http.MethodPost, srv.URL+"/error", nil, []byte("{}"))
	if err != nil || resp.Status != http.StatusInternalServerError || !strings.HasPrefix(string(resp.Body), "the beginning") {
		t.Fatalf("5xx: %+v, %v", resp, err)
	}
}

// The Standard client (gophercloud's) reads a body over the cap no
// further than the cap either: JSON decoding it grew the decoder's
// buffer, doubling, to twice the cap and more.
func TestStandardClientBodyOverTheCapCostsTheCap(t *testing.T) {
	const max = 8 << 20
	srv := overTheCap(4*max, `{"a": "`)
	defer srv.Close()
	c, _ := New(Options{MaxBody: max})
	var err error
	alloc := allocatedBy(func() {
		resp, gerr := c.Standard().Get(srv.URL)
		if err = gerr; err == nil {
			var v any
			err = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
		}
	})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get: %v", err)
	}
	if alloc > 3*max/2 {
		t.Fatalf("decoding %d MiB over an %d MiB cap allocated %d MiB", 4*max>>20, max>>20, alloc>>20)
	}
}

func TestBackoffIsCappedAndJittered(t *testing.T) {
	lo, hi := 200*time.Millisecond, 2*time.Second
	seen := map[time.Duration]bool{}
	for attempt := 0; attempt < 10; attempt++ {
		for i := 0; i < 20; i++ {
			d := jitteredBackoff(lo, hi, attempt, nil)
			if d < lo/2 || d > hi {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, lo/2, hi)
			}
			seen[d] = true
		}
	}
	if len(seen) < 10 {
		t.Fatalf("only %d distinct waits: no jitter", len(seen))
	}
}

func TestStandardClientCapsBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("chunked") {
			w.(http.Flusher).Flush()
		}
		w.Write([]byte(strings.Repeat("x", 1001)))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		max     int64
		query   string
		wantErr bool
	}{{1000, "", true}, {1000, "?chunked", true}, {1001, "", false}, {1001, "?chunked", false}} {
		max, wantErr := tc.max, tc.wantErr
		c, _ := New(Options{MaxBody: max})
		var b []byte
		resp, err := c.Standard().Get(srv.URL + tc.query) // with a length: refused at once
		if err == nil {
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if wantErr != errors.Is(err, ErrTooLarge) || (!wantErr && len(b) != 1001) {
			t.Fatalf("cap %d: %d bytes, %v", max, len(b), err)
		}
	}
}

// A transport that hands back a response with its error (retryablehttp's
// last attempt can) gets the error alone, its body closed: net/http
// would otherwise print a line of its own to stderr.
func TestCappedDropsAResponseBesideAnError(t *testing.T) {
	body := &closeRecorder{Reader: strings.NewReader("late")}
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Body: body}, errors.New("giving up")
	})
	req, _ := http.NewRequest("GET", "http://example.invalid/", nil)
	resp, err := capped{next: next, max: 10}.RoundTrip(req)
	if resp != nil || err == nil || !body.closed {
		t.Fatalf("response %v, error %v, body closed %v", resp, err, body.closed)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }
