package signal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
)

// errBudget is the cause of a signal's context ending with its budget.
var errBudget = errors.New("the retry budget ran out")

// BudgetError is a signal that got no usable answer within its budget:
// the last attempt was cut short at the budget's end, or the next wait
// would have ended after it, after a failure that is retried (no
// answer, 5xx, 429).
type BudgetError struct {
	Budget time.Duration
	// Name is the knob that sets the budget, "" when none.
	Name string
	// Err is the last attempt's failure.
	Err error
	// Before is the cause of the attempt before it, when the last one
	// was cut short and there was one.
	Before string
}

func (e *BudgetError) Error() string {
	knob := ""
	if e.Name != "" {
		knob = " (" + e.Name + ")"
	}
	msg := fmt.Sprintf("%v; retry budget of %s%s spent", e.Err, e.Budget, knob)
	if e.Before != "" {
		msg += ", the attempt before the last: " + e.Before
	}
	return msg
}

func (e *BudgetError) Unwrap() error { return e.Err }

// StoppedError is a signal stopped by its caller's context (SIGTERM),
// with where it stood.
type StoppedError struct {
	Kind Kind
	// Phase says where the signal stood, after "stopped": "before the
	// signal was sent", "while retrying, after 2 failed attempts", ...
	Phase string
	// Err is the context's error.
	Err error
}

func (e *StoppedError) Error() string { return fmt.Sprintf("%s: stopped %s", e.Kind, e.Phase) }

func (e *StoppedError) Unwrap() error { return e.Err }

// progress follows one signal's requests, to log each retry and to say,
// if it is stopped, how far the signal got. A request's body has a
// Content-Length, so one cut short by the stop cannot pass for whole: the
// server sees a short body and the connection closed, which Heat (as any
// HTTP server) rejects; a body written whole may have been taken.
type progress struct {
	log    *slog.Logger
	budget time.Duration

	mu   sync.Mutex
	kind Kind
	// started, wrote, answered are the last request's: it asked for a
	// connection, its headers and body were written whole, its answer
	// began to come.
	started, wrote, answered bool
	// retries is the count of failed attempts retried; lastCause, the
	// last one's cause.
	retries   int
	lastCause string
}

// watch returns ctx with the hooks that follow its requests.
func (p *progress) watch(ctx context.Context) context.Context {
	ctx = httpclient.WithRetryObserver(ctx, p.retry)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) {
			p.mu.Lock()
			p.started, p.wrote, p.answered = true, false, false
			p.mu.Unlock()
		},
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			p.mu.Lock()
			p.wrote = i.Err == nil
			p.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			p.mu.Lock()
			p.answered = true
			p.mu.Unlock()
		},
	})
}

// start is the start of a way out.
func (p *progress) start(k Kind) {
	p.mu.Lock()
	p.kind = k
	p.mu.Unlock()
}

// retry logs a retry, one line: the failed attempt, its cause, the wait.
func (p *progress) retry(r httpclient.Retry) {
	p.mu.Lock()
	p.retries++
	p.lastCause = r.Cause()
	// The wait is not the request's: a stop in it is between attempts.
	p.answered = true
	kind := p.kind
	p.mu.Unlock()
	p.log.Warn(fmt.Sprintf("%s: %s %s failed (attempt %d: %s); next try in %.1fs, %s left of the %s retry budget",
		kind, r.Method, r.URL, r.Attempt, r.Cause(), r.Wait.Seconds(), roundDuration(r.Left), p.budget))
}

// authRetry counts a retry of Keystone's authentication, which the
// session makes itself and logs.
func (p *progress) authRetry() {
	p.mu.Lock()
	p.retries++
	p.answered = true
	p.mu.Unlock()
}

// before is the cause of the last attempt retried, "" if none.
func (p *progress) before() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastCause
}

// phase says where a stopped signal stood.
func (p *progress) phase() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.started:
		return "before the signal was sent"
	case !p.wrote && !p.answered:
		return "while sending a request, before its body was whole: nothing half-sent can pass for a signal"
	case !p.answered:
		return "while waiting for an answer to a request sent whole: Heat may have the signal"
	case p.retries > 0:
		if p.retries == 1 {
			return "while retrying, after 1 failed attempt"
		}
		return fmt.Sprintf("while retrying, after %d failed attempts", p.retries)
	}
	return "between two requests, before the signal was sent"
}

// roundDuration rounds d for a log line: to the second from 10 s, else
// to the tenth.
func roundDuration(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// LogFailures logs a Send's error: one ERROR line per way that failed,
// and one WARNING line, "<program> stopped ..." saying where the signal
// stood, for a way a stop cut short (not "context canceled"). It tells
// whether the run was stopped. attrs go on each line.
func LogFailures(log *slog.Logger, program string, err error, attrs ...any) (stopped bool) {
	failures := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		failures = j.Unwrap()
	}
	for _, f := range failures {
		var se *StoppedError
		if errors.As(f, &se) {
			log.Warn(fmt.Sprintf("%s stopped %s (%s)", program, se.Phase, se.Kind), attrs...)
			stopped = true
			continue
		}
		log.Error("Signal failed: "+f.Error(), attrs...)
	}
	return stopped
}
