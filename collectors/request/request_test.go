package request

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

func newCollector(t *testing.T, url string, log *bytes.Buffer, maxBody int64) *Collector {
	t.Helper()
	client, err := httpclient.New(httpclient.Options{Timeout: 2 * time.Second, MaxBody: maxBody, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	return &Collector{URL: url, DeploymentKeys: []string{"deployments"}, Client: client,
		Log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

const doc = `{"deployments": [{"name": "d1", "group": "os-apply-config", "config": {"k": "v"}}, {"name": "s", "group": "script", "config": "x"}], "other": 1}`

// One conditional GET per poll: an unchanged document costs a 304, and the
// last document is reused; exploded deployments come with it.
func TestConditionalGet(t *testing.T) {
	var gets, conditional atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s", r.Method)
		}
		gets.Add(1)
		if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") == "Sun, 22 Nov 2015 05:00:00 GMT" {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Sun, 22 Nov 2015 05:00:00 GMT")
		w.Write([]byte(doc))
	}))
	defer srv.Close()
	var log bytes.Buffer
	c := newCollector(t, srv.URL+"/meta", &log, 0)
	for i := 0; i < 3; i++ {
		entries, err := c.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 || entries[0].Name != "request" || entries[1].Name != "d1" || jsondoc.Dumps(entries[1].Content) != `{"k": "v"}` {
			t.Fatalf("pass %d: entries %+v", i, entries)
		}
	}
	if gets.Load() != 3 || conditional.Load() != 2 {
		t.Fatalf("%d GETs, %d conditional", gets.Load(), conditional.Load())
	}
}

// An unparseable Last-Modified is not sent back, and is not fatal (the
// reference's daemon died on it).
func TestBadLastModifiedIsIgnored(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-Modified-Since") != "" {
			t.Errorf("sent If-Modified-Since %q", r.Header.Get("If-Modified-Since"))
		}
		w.Header().Set("Last-Modified", "yesterday-ish")
		w.Write([]byte(`{"a": 1}`))
	}))
	defer srv.Close()
	var log bytes.Buffer
	c := newCollector(t, srv.URL, &log, 0)
	for i := 0; i < 2; i++ {
		if _, err := c.Collect(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A Last-Modified later than the answer's Date (a server's clock that
// ran ahead, a proxy's nonsense) is not sent back: If-Modified-Since
// with it would have every change until that date answered 304, as
// Swift and Go's file server do, and the node would miss them.
func TestLastModifiedAheadIsNotSentBack(t *testing.T) {
	var version atomic.Int32
	var modified atomic.Int64 // Unix seconds
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && modified.Load() <= ims.Unix() {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Last-Modified", time.Now().Add(30*24*time.Hour).UTC().Format(http.TimeFormat))
		fmt.Fprintf(w, `{"v": %d}`, version.Load())
	}))
	defer srv.Close()
	var log bytes.Buffer
	c := newCollector(t, srv.URL, &log, 0)
	for v := int32(1); v <= 2; v++ {
		version.Store(v)
		modified.Store(time.Now().Unix())
		entries, err := c.Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := jsondoc.Dumps(entries[0].Content); got != fmt.Sprintf(`{"v": %d}`, v) {
			t.Fatalf("version %d published, collected %s", v, got)
		}
	}
}

func TestFailuresAreUnavailable(t *testing.T) {
	var calls atomic.Int32
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		max     int64
		want    string
	}{
		{"5xx after retries", func(w http.ResponseWriter, r *http.Request) { calls.Add(1); w.WriteHeader(503) }, 0, "503 Service Unavailable"},
		{"404", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }, 0, "404 Not Found"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }, 0, "Failed to parse as json"},
		{"not an object", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("[1]")) }, 0, "Failed to parse as json"},
		{"too large", func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte(" "), 2048)) }, 1024, "size limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			var log bytes.Buffer
			_, err := newCollector(t, srv.URL+"/x?temp_url_sig=SECRET&temp_url_expires=1", &log, tc.max).Collect(context.Background())
			if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(err.Error()+log.String(), tc.want) {
				t.Fatalf("error %v\nlog %s", err, log.String())
			}
			if strings.Contains(log.String()+err.Error(), "SECRET") {
				t.Fatalf("signed URL leaked: %s %v", log.String(), err)
			}
		})
	}
	if calls.Load() != 3 {
		t.Errorf("5xx: %d attempts, want 3 (2 retries)", calls.Load())
	}
}

func TestRefusedConnectionIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var log bytes.Buffer
	if _, err := newCollector(t, url, &log, 0).Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) {
		t.Fatalf("error %v", err)
	}
}

func TestNoURLIsNotConfigured(t *testing.T) {
	var log bytes.Buffer
	if _, err := newCollector(t, "", &log, 0).Collect(context.Background()); !errors.Is(err, collectors.ErrNotConfigured) {
		t.Fatalf("error %v", err)
	}
}
