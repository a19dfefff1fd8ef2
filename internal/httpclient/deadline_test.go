package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server answers with statuses in turn (the last one for ever after),
// each with its Retry-After when given as "503:1".
func server(t *testing.T, answers ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		a := answers[min(i, len(answers)-1)]
		status, after, _ := strings.Cut(a, ":")
		if after != "" {
			w.Header().Set("Retry-After", after)
		}
		code := map[string]int{"200": 200, "429": 429, "500": 500, "503": 503, "404": 404}[status]
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetryDeadline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answers    []string
		budget     time.Duration
		wantStatus int
		wantN      int32 // 0: more than one, however many
		minTime    time.Duration
		maxTime    time.Duration
	}{
		{"a 503 then 200 is retried", []string{"503", "200"}, 5 * time.Second, 200, 2, 0, 2 * time.Second},
		{"a 404 is final at once", []string{"404"}, 5 * time.Second, 404, 1, 0, time.Second},
		{"500s until the deadline give the last 500", []string{"500"}, time.Second, 500, 0, 0, 2 * time.Second},
		{"Retry-After is waited for in full", []string{"429:1", "200"}, 5 * time.Second, 200, 2, time.Second, 3 * time.Second},
		{"Retry-After past the deadline ends the retries", []string{"503:30", "200"}, 2 * time.Second, 503, 1, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := server(t, tc.answers...)
			c, _ := New(Options{Retries: 1000, Timeout: 5 * time.Second})
			ctx := WithRetryDeadline(context.Background(), time.Now().Add(tc.budget))
			start := time.Now()
			r, err := c.Do(ctx, http.MethodPost, srv.URL, nil, []byte("{}"))
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.wantStatus || (tc.wantN != 0 && n.Load() != tc.wantN) || (tc.wantN == 0 && n.Load() < 2) {
				t.Fatalf("status %d after %d requests, want %d after %d", r.Status, n.Load(), tc.wantStatus, tc.wantN)
			}
			if int32(r.Attempts) != n.Load() {
				t.Errorf("Attempts %d, server saw %d", r.Attempts, n.Load())
			}
			if took < tc.minTime || took > tc.maxTime {
				t.Errorf("took %v, want within [%v, %v]", took, tc.minTime, tc.maxTime)
			}
		})
	}
}

func TestRetryDeadlineConnectionRefused(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	c, _ := New(Options{Retries: 1000, Timeout: time.Second})
	ctx := WithRetryDeadline(context.Background(), time.Now().Add(800*time.Millisecond))
	_, err := c.Do(ctx, http.MethodPost, "http://"+addr+"/x?temp_url_sig=s3cr3t", nil, []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), "attempts)") {
		t.Fatalf("got %v, want connection refused after several attempts", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("error %q quotes the query", err)
	}
}

// The Standard client (gophercloud's) keeps to the deadline too, and
// without one behaves as before.
func TestStandardClientRetryDeadline(t *testing.T) {
	srv, n := server(t, "503")
	c, _ := New(Options{Retries: 1000})
	ctx := WithRetryDeadline(context.Background(), time.Now().Add(time.Second))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := c.Standard().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || n.Load() < 2 {
		t.Fatalf("status %d after %d requests", resp.StatusCode, n.Load())
	}
	n.Store(0)
	c2, _ := New(Options{Retries: 1})
	resp, err = c2.Standard().Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || n.Load() != 2 {
		t.Fatalf("without a deadline: status %d after %d requests, want 503 after 2", resp.StatusCode, n.Load())
	}
}

func TestMaxWaitCapsTheBackoff(t *testing.T) {
	c, _ := New(Options{MaxWait: 300 * time.Millisecond})
	for attempt := 0; attempt < 10; attempt++ {
		if d := honouringBackoff(c.rc.RetryWaitMin, c.rc.RetryWaitMax, attempt, nil); d > 300*time.Millisecond {
			t.Fatalf("attempt %d waits %v, over the 300ms cap", attempt, d)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"7":                             7 * time.Second,
		" 0 ":                           0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 00:00:00 GMT": 0,
	} {
		if d, ok := RetryAfter(v, now); !ok || d != want {
			t.Errorf("%q: %v %v, want %v", v, d, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon", "99999999999"} {
		if _, ok := RetryAfter(v, now); ok {
			t.Errorf("%q accepted", v)
		}
	}
}

// Under a retry deadline, the observer hears of every retry, before its
// wait: the failed attempt's number, its cause and the wait; never of
// the last attempt, whose answer or error the call returns.
func TestRetryObserver(t *testing.T) {
	srv, n := server(t, "503", "500", "429:0", "200")
	c, _ := New(Options{Retries: 1000, Timeout: 5 * time.Second})
	var got []Retry
	ctx := WithRetryDeadline(context.Background(), time.Now().Add(time.Minute))
	ctx = WithRetryObserver(ctx, func(r Retry) { got = append(got, r) })
	r, err := c.Do(ctx, http.MethodPut, srv.URL+"/o?temp_url_sig=s3cr3t", nil, []byte("{}"))
	if err != nil || r.Status != 200 || n.Load() != 4 {
		t.Fatalf("%v, %+v, %d requests", err, r, n.Load())
	}
	want := []string{"PUT " + srv.URL + "/o 1 HTTP 503 Service Unavailable", "PUT " + srv.URL + "/o 2 HTTP 500 Internal Server Error",
		"PUT " + srv.URL + "/o 3 HTTP 429 Too Many Requests"}
	if len(got) != len(want) {
		t.Fatalf("retries %+v, want %q", got, want)
	}
	for i, r := range got {
		if s := fmt.Sprintf("%s %s %d %s", r.Method, r.URL, r.Attempt, r.Cause()); s != want[i] || r.Left <= 0 || r.Left > time.Minute {
			t.Errorf("retry %d: %q (left %v), want %q", i, s, r.Left, want[i])
		}
	}
	if got[0].Wait <= 0 || got[2].Wait != 0 { // Retry-After: 0 is honoured as given
		t.Errorf("waits %v, %v", got[0].Wait, got[2].Wait)
	}
}

// A connection that fails is a cause without the URL, and a call whose
// next wait would end past the deadline says so.
func TestRetryObserverErrorsAndOutOfTime(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused from now on
	c, _ := New(Options{Retries: 1000, Timeout: 5 * time.Second})
	var got []Retry
	ctx := WithRetryDeadline(context.Background(), time.Now().Add(time.Second))
	ctx = WithRetryObserver(ctx, func(r Retry) { got = append(got, r) })
	_, err = c.Do(ctx, http.MethodPost, "http://"+addr+"/x?Signature=s3cr3t", nil, []byte("{}"))
	if err == nil || !errors.Is(err, ErrOutOfRetryTime) || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("got %v, want an error that ran out of retry time", err)
	}
	if len(got) == 0 || got[0].Status != 0 || got[0].Err == nil || !strings.Contains(got[0].Cause(), "refused") || strings.Contains(got[0].Cause(), "/x") {
		t.Fatalf("retries %+v", got)
	}
	for i, r := range got {
		if r.Attempt != i+1 {
			t.Errorf("retry %d numbers attempt %d", i, r.Attempt)
		}
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("(after %d attempts)", len(got)+1)) {
		t.Errorf("%v: not %d attempts", err, len(got)+1)
	}
}
