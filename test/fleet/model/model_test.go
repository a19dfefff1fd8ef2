package model

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// serve runs the model and its control API on 127.0.0.1 for one test.
func serve(t *testing.T, o Options) (string, Remote) {
	t.Helper()
	e := New(o, time.Now())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Serve(ctx, ln); close(done) }()
	ctl := httptest.NewServer(Control(e))
	t.Cleanup(func() { ctl.Close(); cancel(); <-done })
	return "http://" + ln.Addr().String() + "/doc", Remote{URL: ctl.URL}
}

func get(t *testing.T, method, url string, h map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The endpoint answers as a Swift object does: an ETag and a
// Last-Modified, 304 to a conditional GET that matches, the new document
// once it changed; and it counts every request, and the bytes.
func TestConditionalGetsAndChanges(t *testing.T) {
	url, ctl := serve(t, Options{DocBytes: 4096})
	resp, body := get(t, "GET", url, nil)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode != 200 || len(body) != 4096 || Version([]byte(body)) != 0 || etag == "" || lm == "" {
		t.Fatalf("first GET: %d, %d bytes, version %d, etag %q, last-modified %q", resp.StatusCode, len(body), Version([]byte(body)), etag, lm)
	}
	for _, h := range []map[string]string{{"If-None-Match": etag}, {"If-Modified-Since": lm}, {"If-None-Match": `"other", ` + etag}} {
		if resp, body := get(t, "GET", url, h); resp.StatusCode != 304 || body != "" {
			t.Fatalf("conditional GET %v: %d %q", h, resp.StatusCode, body)
		}
	}
	if resp, body := get(t, "HEAD", url, nil); resp.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD: %d %q", resp.StatusCode, body)
	}
	v, at, err := ctl.Change(context.Background())
	if err != nil || v != 1 || time.Since(at) > time.Minute {
		t.Fatalf("change: %d %v %v", v, at, err)
	}
	resp, body = get(t, "GET", url, map[string]string{"If-None-Match": etag})
	if resp.StatusCode != 200 || Version([]byte(body)) != 1 || resp.Header.Get("ETag") == etag {
		t.Fatalf("after the change: %d, version %d", resp.StatusCode, Version([]byte(body)))
	}
	if resp, _ := get(t, "POST", url, nil); resp.StatusCode != 405 {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	s, err := ctl.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"GET 200": 2, "GET 304": 3, "HEAD 200": 1, "POST 405": 1}
	for k, n := range want {
		if s.Kinds[k] != n {
			t.Errorf("%s: %d, want %d (%v)", k, s.Kinds[k], n, s.Kinds)
		}
	}
	var reqs, out float64
	for _, v := range s.Requests {
		reqs += v
	}
	for _, v := range s.BytesOut {
		out += v
	}
	if reqs != 7 || out < 2*4096 || out > 2*4096+7*400 || len(s.Changes) != 1 {
		t.Fatalf("%v requests, %v bytes out, %d changes", reqs, out, len(s.Changes))
	}
}

// Down with 503, the endpoint fails at once; hanging, it holds every
// request until the outage ends and then answers them all.
func TestOutages(t *testing.T) {
	url, ctl := serve(t, Options{DocBytes: 100})
	ctx := context.Background()
	if err := ctl.Outage(ctx, Unavailable); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, "GET", url, nil); resp.StatusCode != 503 {
		t.Fatalf("during a 503 outage: %d", resp.StatusCode)
	}
	if err := ctl.Outage(ctx, Hang); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	answered := make(chan time.Time, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, _ := get(t, "GET", url, nil); resp.StatusCode == 200 {
				answered <- time.Now()
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if len(answered) != 0 {
		t.Fatal("answered during a hang")
	}
	ended := time.Now()
	if err := ctl.Outage(ctx, ""); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(answered)
	n := 0
	for at := range answered {
		n++
		if at.Before(ended) {
			t.Fatal("answered before the outage ended")
		}
	}
	if n != 3 {
		t.Fatalf("%d of 3 held requests answered", n)
	}
	if err := ctl.Outage(ctx, "flood"); err == nil || !strings.Contains(err.Error(), "unknown outage mode") {
		t.Fatalf("unknown mode: %v", err)
	}
}

func TestLatency(t *testing.T) {
	url, _ := serve(t, Options{DocBytes: 100, Latency: 150 * time.Millisecond})
	t0 := time.Now()
	get(t, "GET", url, nil)
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Fatalf("answered in %v, latency 150ms", d)
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{string(Document(42, 1000)), 42},
		{`{"fleetsim": {"version": 7}, "x": 1}`, 7},
		{"{\n \"fleetsim\": {\n  \"version\": 8\n }}", 8},
		{`{"other": 1}`, -1},
		{"", -1},
	} {
		if got := Version([]byte(tc.in)); got != tc.want {
			t.Errorf("Version(%.40q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if n := len(Document(1, 190*1024)); n != 190*1024 {
		t.Errorf("document of %d bytes, want 190 KiB", n)
	}
}
