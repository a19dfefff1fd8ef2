package signal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/signal"
)

// post is a signal that sends the body to a URL with a method, with a
// limit of its own (a big one lets a body outgrow the kernel's buffers).
type post struct {
	method, url string
	limit       int
}

func (p post) Kind() signal.Kind {
	if p.method == http.MethodPut {
		return "TEMP_URL_SIGNAL"
	}
	return "CFN_SIGNAL"
}

func (p post) Limit() int        { return p.limit }
func (p post) Secrets() []string { return nil }

func (p post) Send(ctx context.Context, r *signal.Request) error {
	resp, err := r.HTTP.Deliver(ctx, p.method, p.url, http.Header{"Content-Type": {"application/json"}}, r.Body)
	if err != nil {
		return err
	}
	if resp.Status/100 != 2 {
		return signal.NewHTTPError(p.method, p.url, resp)
	}
	return nil
}

// logLines is a logger's lines, for a test to read, and a channel that
// gets each WARNING line.
type logLines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	warns chan string
}

func newLog() (*logLines, *slog.Logger) {
	l := &logLines{warns: make(chan string, 100)}
	return l, slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte("level=WARN")) {
		l.warns <- string(p)
	}
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// retryLines are the log's retry lines.
func (l *logLines) retryLines() []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, " failed (attempt ") {
			out = append(out, line)
		}
	}
	return out
}

// Each retry is one WARNING line: the way, the request without its
// query, the failed attempt's number and cause, the wait, and what is
// left of the budget.
func TestEachRetryLogsOneLine(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n++; n < 3 {
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	l, log := newLog()
	o := signal.Options{Log: log, Budget: time.Minute}
	if err := signal.SendTo(context.Background(), post{"POST", srv.URL + "/sig?Signature=s3cr3t", signal.MaxBody}, jsondoc.NewObject(0), o); err != nil {
		t.Fatal(err)
	}
	lines := l.retryLines()
	for i, want := range []string{"attempt 1: HTTP 503 Service Unavailable", "attempt 2: HTTP 503 Service Unavailable"} {
		re := regexp.MustCompile(`level=WARN msg="CFN_SIGNAL: POST ` + regexp.QuoteMeta(srv.URL) + `/sig failed \(` + want +
			`\); next try in \d+\.\ds, [\dms.]+ left of the 1m0s retry budget"$`)
		if len(lines) != 2 || !re.MatchString(lines[i]) {
			t.Fatalf("retry lines %q, want two, the %d. like %s", lines, i+1, re)
		}
	}
	if strings.Contains(l.String(), "s3cr3t") {
		t.Errorf("the signature in the log:\n%s", l)
	}
}

// hang is a server that never answers: its handler blocks until the test
// ends. It counts the requests.
func hang(t *testing.T) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // before Close, which waits for handlers
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// No attempt outlives the budget: against a server that never answers,
// an attempt's deadline is the earlier of its own timeout and the
// budget's end. With the default 60 s per attempt and a budget of 1 s,
// the one attempt is cut at the budget's end (before, it ran its 60 s
// out); with 300 ms per attempt, they are retried while a retry can
// still finish in time. Either way the error names the budget and its
// knob, and every retry but the last attempt was logged.
func TestNoAttemptOutlivesTheBudget(t *testing.T) {
	for _, tc := range []struct {
		name        string
		timeout     time.Duration
		wantAttempt int // 0: one or more
	}{
		{"one attempt, cut at the budget's end", 0, 1},
		{"attempts under their own timeout", 300 * time.Millisecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := hang(t)
			l, log := newLog()
			o := signal.Options{Log: log, Budget: time.Second, BudgetName: "THE_KNOB", HTTP: httpclient.Options{Timeout: tc.timeout}}
			err := signal.SendTo(context.Background(), post{"PUT", srv.URL + "/sig", signal.MaxBody}, jsondoc.NewObject(0), o)
			var be *signal.BudgetError
			if !errors.As(err, &be) || !strings.Contains(err.Error(), "; retry budget of 1s (THE_KNOB) spent") {
				t.Fatalf("got %v, want the budget spent", err)
			}
			n, lines := requests(), l.retryLines()
			if tc.wantAttempt != 0 && n != tc.wantAttempt {
				t.Errorf("%d attempts, want %d", n, tc.wantAttempt)
			}
			if len(lines) != n-1 {
				t.Fatalf("%d attempts, retry lines %q", n, lines)
			}
			for i, line := range lines {
				if !strings.Contains(line, fmt.Sprintf("failed (attempt %d: ", i+1)) || !strings.Contains(line, "Timeout exceeded") {
					t.Errorf("retry line %q", line)
				}
			}
			if n > 1 && !strings.Contains(err.Error(), fmt.Sprintf("(after %d attempts)", n)) {
				t.Errorf("%v: not %d attempts", err, n)
			}
		})
	}
}

// A body that was read whole, as a server sees it, or how far it got.
type received struct {
	declared int64
	got      int
	err      error
}

// A stop says where the signal stood, and a body is sent whole or not at
// all: a body cut short by the stop has fewer bytes than its
// Content-Length, which no HTTP server takes for a request, so the
// server never has a part of a signal it could take for the whole.
func TestStopSendsNothingHalfSent(t *testing.T) {
	big := jsondoc.NewObject(1)
	big.Set("deploy_stdout", strings.Repeat("a", 48<<20)) // over the kernel's socket buffers (4 + 32 MiB at most)
	small := jsondoc.NewObject(1)
	small.Set("deploy_stdout", "done")
	for _, tc := range []struct {
		name string
		data jsondoc.Value
		// handler answers, after reading the body (whole) if read, and
		// gives what it got to seen.
		readFirst bool
		status    int
		// stopWhen is the event after which the test stops the signal:
		// "" at once, "headers" when the handler runs (with readFirst,
		// once it read the body whole), "retry" at the retry's log line.
		// Not the client's WroteRequest: net/http calls it before it
		// flushes its buffer, and a stop then can close the connection
		// with a small request still unsent (the server sees EOF, and
		// the test waited for a request that never came: seen under
		// qemu-user in about 1 run of 40, and natively too).
		stopWhen  string
		wantPhase string
		wantWhole bool // the server got the body whole
		wantN     int  // requests
	}{
		{"stopped before", small, true, 200, "", "before the signal was sent", false, 0},
		{"stopped mid-body", big, false, 200, "headers", "while sending a request, before its body was whole", false, 1},
		{"stopped waiting for the answer", small, true, 200, "headers", "while waiting for an answer to a request sent whole", true, 1},
		{"stopped while retrying", small, true, 503, "retry", "while retrying, after 1 failed attempt", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers, release := make(chan struct{}, 1), make(chan struct{})
			seen := make(chan received, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.readFirst {
					b, err := io.ReadAll(r.Body)
					seen <- received{r.ContentLength, len(b), err}
				}
				if tc.status != 200 {
					w.Header().Set("Retry-After", "30") // waited for in full: the stop comes first
					w.WriteHeader(tc.status)
					return
				}
				headers <- struct{}{}
				<-release
				if !tc.readFirst {
					b, err := io.ReadAll(r.Body)
					seen <- received{r.ContentLength, len(b), err}
				}
			}))
			defer srv.Close()
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			defer free()
			l, log := newLog()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := signal.Options{Log: log, Budget: time.Hour}
			done := make(chan error, 1)
			if tc.stopWhen == "" {
				cancel()
			}
			go func() { done <- signal.SendTo(ctx, post{"POST", srv.URL + "/sig", 1 << 30}, tc.data, o) }()
			switch tc.stopWhen {
			case "headers":
				<-headers
			case "retry":
				<-l.warns
			}
			cancel()
			err := <-done
			var se *signal.StoppedError
			if !errors.As(err, &se) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "CFN_SIGNAL: stopped "+tc.wantPhase) {
				t.Fatalf("got %v, want stopped %s", err, tc.wantPhase)
			}
			free() // the handler reads what came
			var got []received
			for range tc.wantN {
				got = append(got, <-seen)
			}
			srv.Close()
			close(seen)
			for r := range seen {
				got = append(got, r)
			}
			if len(got) != tc.wantN {
				t.Fatalf("the server saw %d requests, want %d", len(got), tc.wantN)
			}
			for _, r := range got {
				whole := r.err == nil && int64(r.got) == r.declared
				if whole != tc.wantWhole || !whole && int64(r.got) >= r.declared {
					t.Errorf("the server got %d of %d bytes (%v), want whole %v", r.got, r.declared, r.err, tc.wantWhole)
				}
			}
		})
	}
}
