package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/tripleo-go/agent/internal/secret"
)

type retryDeadlineKey struct{}

// MinAttemptTime is the least time a retry under a retry deadline must
// have left after its wait.
const MinAttemptTime = 100 * time.Millisecond

// WithRetryDeadline returns a context under which requests retry until t
// rather than until the count of Retries runs out (set Retries high): no
// retry is scheduled unless, after its wait, as much time is left before
// t as the failed attempt took (and at least MinAttemptTime): an attempt
// that would be cut short by a deadline at t is not started. The last
// answer (a 5xx, a 429) or error is returned instead, so the caller can
// say what the server said rather than that time ran out. Under it, a Retry-After
// on a 429 or 503 is waited for as given, never shortened by jitter; one
// that would end after t ends the retries the same way. The context's own
// deadline, if any, still cuts an attempt short.
func WithRetryDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, retryDeadlineKey{}, t)
}

// ErrOutOfRetryTime marks (errors.Is) the error of a call whose retries
// ended because the next wait would have ended after the retry deadline;
// the message does not say so, the caller does, naming its budget.
var ErrOutOfRetryTime = errors.New("no time left to retry before the deadline")

// outOfTime is an error that is ErrOutOfRetryTime without saying so:
// the caller knows its deadline better.
type outOfTime struct{ error }

func (e outOfTime) Is(target error) bool { return target == ErrOutOfRetryTime }

func (e outOfTime) Unwrap() error { return e.error }

// Retry is a failed attempt about to be tried again, as a
// WithRetryObserver function sees it.
type Retry struct {
	// Method and URL are the request's, the URL without its query.
	Method, URL string
	// Attempt is the number of the attempt that failed, from 1.
	Attempt int
	// Status is its answer's (a 5xx, a 429); 0 when there was none.
	Status int
	// Err is why there was no answer, without the URL.
	Err error
	// Wait is the wait before the next attempt; Left, the time from now
	// to the retry deadline.
	Wait, Left time.Duration
}

// Cause is what went wrong, on one line: "HTTP 503 Service Unavailable"
// or the error.
func (r Retry) Cause() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	s := fmt.Sprintf("HTTP %d", r.Status)
	if t := http.StatusText(r.Status); t != "" {
		s += " " + t
	}
	return s
}

type retryObserverKey struct{}

// WithRetryObserver returns a context under which f is told of each retry
// decided under a retry deadline (WithRetryDeadline), before its wait, so
// that a program can say what it is doing while it retries. f is called
// from the goroutine that made the request.
func WithRetryObserver(ctx context.Context, f func(Retry)) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, f)
}

func retryDeadline(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(retryDeadlineKey{}).(time.Time)
	return t, ok
}

// attempts counts the requests of one call made under a retry deadline;
// nil for the others, whose messages stay as they were.
type attempts struct {
	n int
	// outOfTime: the retries ended because the next wait would have
	// ended after the deadline.
	outOfTime bool
}

func (a *attempts) count() int {
	if a == nil {
		return 0
	}
	return a.n
}

// String is what an error message says about the attempts: nothing for
// one.
func (a *attempts) String() string {
	if a.count() <= 1 {
		return ""
	}
	return fmt.Sprintf(" (after %d attempts)", a.n)
}

// retrier is the retrying client for one call: the shared one, or, under
// a retry deadline, one of its own that knows the deadline.
func (c *Client) retrier(ctx context.Context, method, rawURL string) (*retryablehttp.Client, *attempts) {
	deadline, ok := retryDeadline(ctx)
	if !ok {
		return c.rc, nil
	}
	n := &attempts{}
	observe, _ := ctx.Value(retryObserverKey{}).(func(Retry))
	var began time.Time // the last attempt's start
	rc := &retryablehttp.Client{
		HTTPClient:     c.rc.HTTPClient, // shares its connections
		RetryWaitMin:   c.rc.RetryWaitMin,
		RetryWaitMax:   c.rc.RetryWaitMax,
		RetryMax:       c.rc.RetryMax,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
		RequestLogHook: func(retryablehttp.Logger, *http.Request, int) { n.n, began = n.n+1, time.Now() },
	}
	// CheckRetry decides and Backoff only returns the wait decided: the
	// decision needs the wait, and Backoff cannot say "stop".
	var next time.Duration
	rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		retry, cerr := checkRetry(ctx, resp, err)
		if !retry {
			return false, cerr
		}
		next = honouringBackoff(rc.RetryWaitMin, rc.RetryWaitMax, n.n-1, resp)
		now := time.Now()
		if now.Add(next + max(now.Sub(began), MinAttemptTime)).After(deadline) {
			n.outOfTime = true
			return false, nil // the last answer stands
		}
		if observe != nil {
			r := Retry{Method: method, URL: secret.RedactURL(rawURL), Attempt: n.n, Wait: next, Left: deadline.Sub(now)}
			if resp != nil {
				r.Status = resp.StatusCode
			} else {
				r.Err = redactErr(err)
			}
			observe(r)
		}
		return true, nil
	}
	rc.Backoff = func(time.Duration, time.Duration, int, *http.Response) time.Duration { return next }
	return rc, n
}

// honouringBackoff waits what a 429's or 503's Retry-After asks, else
// jitteredBackoff's capped exponential wait.
func honouringBackoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return d
		}
	}
	return jitteredBackoff(min, max, attempt, nil)
}

// RetryAfter reads a Retry-After value (seconds, or an HTTP date) as the
// wait from now.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 || s > int64(24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// deadlineAware sends the Standard client's requests made under a retry
// deadline through their own retrier; the others go on as before.
type deadlineAware struct {
	c    *Client
	next http.RoundTripper
}

func (t deadlineAware) CloseIdleConnections() { t.c.CloseIdleConnections() }

func (t deadlineAware) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := retryDeadline(req.Context()); !ok {
		return t.next.RoundTrip(req)
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	rc, _ := t.c.retrier(req.Context(), req.Method, req.URL.String())
	resp, err := rc.Do(rreq)
	// http.Client wraps what a RoundTripper returns in a url.Error.
	var ue *url.Error
	if errors.As(err, &ue) {
		return resp, ue.Err
	}
	return resp, err
}
