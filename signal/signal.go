// Package signal sends a software deployment's result back to Heat, as
// heat-config-notify does: it asks its list of transports which way the
// deployment's derived inputs send the signal (a pre-signed URL, a Zaqar
// queue, the Heat API, or none), serialises the data as Python's
// json.dumps does, trims deploy_stdout and deploy_stderr from the start
// to fit the way's size limit, and hands it to that way's Sender under
// one time budget.
//
// The transports are packages of their own (signal/presigned,
// signal/zaqarqueue, signal/heatapi) that import this one, each a
// Transport value; signal/all lists them, and a program passes that list
// in Options.Transports.
package signal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// Kind is a way a signal leaves the node, named by Heat's
// signal_transport values; each transport package names its own.
type Kind string

// None is a deployment without signal inputs: nothing is sent.
const None Kind = "NO_SIGNAL"

const (
	// DefaultAttemptTimeout bounds each request.
	DefaultAttemptTimeout = 60 * time.Second
	// maxWait caps the backoff, so a thousand nodes retrying against a
	// struggling Heat do not ask every two seconds.
	maxWait = 30 * time.Second
	// manyRetries leaves the count of retries to the budget.
	manyRetries = 1 << 20
)

// Options configure a Send.
type Options struct {
	// Log gets the reference's debug lines and the trim warnings; nil
	// discards them. Failures are returned, not logged.
	Log *slog.Logger
	// HTTP is the HTTP policy: CAFile, Insecure, MaxBody as given;
	// Timeout bounds each attempt (DefaultAttemptTimeout when zero);
	// Retries and MaxWait, when zero, leave retrying to Budget, with
	// waits of at most 30 s.
	HTTP httpclient.Options
	// Budget is how long the signal may take, retries included: no
	// retry starts whose wait would end after it, and an attempt under
	// way when it ends is cut short (each attempt's deadline is the
	// earlier of its Timeout and the budget's end). Zero means
	// deadline.DefaultNotifyRetry; negative, one attempt, under its
	// Timeout.
	Budget time.Duration
	// BudgetName is the knob that sets Budget, quoted in the error when
	// it runs out (heat-config-notify's environment variable).
	BudgetName string
	// Transports are the ways out (signal/all's list).
	Transports Transports
	// TokenCache is the directory where the Keystone tokens of the
	// signals that authenticate are kept for the next run (TokenCacheDir);
	// "" keeps none.
	TokenCache string
}

// Request is what a Sender is given to send: the same for every way.
type Request struct {
	Kind Kind
	// Body is the serialised signal data, trimmed to the Limit.
	Body []byte
	// HTTP makes the requests. Deadline is when retries stop (the
	// context carries it too, for HTTP's own retries).
	HTTP     *httpclient.Client
	Deadline time.Time
	Log      *slog.Logger
	// TokenCache is Options.TokenCache.
	TokenCache string

	progress *progress
}

// Authenticate gets the Keystone session s a token, through r's HTTP
// policy, which s keeps for the requests after: a valid one from r's
// token cache if there is one, else a new one, kept there. It tries
// again, with the HTTP policy's backoff (from 200 ms, doubling,
// jittered), until the retry deadline, while Keystone's answers cannot
// be used (cut short, garbled, an error page under 200): the HTTP policy
// retries only failed requests and 5xx. A refusal or an unusable
// auth_url is final at once.
func (r *Request) Authenticate(ctx context.Context, s *keystone.Session) error {
	s.HTTP = r.HTTP.Standard()
	if s.CacheDir == "" {
		s.CacheDir = r.TokenCache
	}
	if s.Log == nil {
		s.Log = r.Log
	}
	for attempt, base := 1, 200*time.Millisecond; ; attempt, base = attempt+1, min(2*base, maxWait) {
		_, err := s.Client(ctx)
		wait := base/2 + rand.N(base/2+1)
		if err == nil || keystone.Permanent(err) || ctx.Err() != nil || time.Now().Add(wait).After(r.Deadline) {
			return err
		}
		if r.progress != nil {
			r.progress.authRetry()
		}
		cause := secret.NewRedactor(s.Creds.Password.Reveal()).Redact(err.Error())
		r.Log.Warn(fmt.Sprintf("%s: Keystone's answer could not be used (attempt %d: %s); next try in %.1fs, %s left of the retry budget",
			r.Kind, attempt, cause, wait.Seconds(), roundDuration(time.Until(r.Deadline))))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// Send signals data for deployment d, as heat-config-notify does: by each
// way of o.Transports that claims d (signal/all's: a pre-signed URL; then
// a Zaqar queue, else the Heat API). It returns the ways it took, [None]
// (and nil) when there was none. Every way is tried even if one failed;
// the error joins their failures. An empty o.Transports is an error, not
// a deployment left unsignalled.
func Send(ctx context.Context, d *deployment.Deployment, data jsondoc.Value, o Options) ([]Kind, error) {
	if len(o.Transports) == 0 {
		return nil, errors.New("no signal transports in this program")
	}
	senders, err := o.Transports.Plan(d)
	if err != nil {
		return nil, err
	}
	if len(senders) == 0 {
		o.log().Debug("No signal inputs (NO_SIGNAL): nothing to send")
		return []Kind{None}, nil
	}
	kinds := make([]Kind, len(senders))
	for i, s := range senders {
		kinds[i] = s.Kind()
	}
	return kinds, sendAll(ctx, senders, data, o)
}

// SendTo sends data by s under the same policy as a deployment's signal
// (the legacy completion handles are pre-signed URLs of no deployment).
func SendTo(ctx context.Context, s Sender, data jsondoc.Value, o Options) error {
	return sendAll(ctx, []Sender{s}, data, o)
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return logging.Discard
	}
	return o.Log
}

// sendAll sends each signal under one budget.
func sendAll(ctx context.Context, senders []Sender, data jsondoc.Value, o Options) error {
	ho := policy(o.HTTP)
	budget := o.Budget
	switch {
	case budget == 0:
		budget = deadline.DefaultNotifyRetry
	case budget < 0:
		budget, ho.Retries = 0, 0
	}
	client, err := httpclient.New(ho)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(budget)
	ctx = httpclient.WithRetryDeadline(ctx, deadline)
	// The hard stop: no attempt outlives the budget, whatever a
	// transport does; without retries, the one attempt has its Timeout.
	stop := deadline
	if budget == 0 {
		stop = deadline.Add(ho.Timeout)
	}
	parent := ctx
	ctx, cancel := context.WithDeadlineCause(ctx, stop, errBudget)
	defer cancel()
	p := &progress{log: o.log(), budget: budget}
	ctx = p.watch(ctx)

	red := redactor(senders)
	var errs []error
	for _, s := range senders {
		r := &Request{Kind: s.Kind(), HTTP: client, Deadline: deadline, Log: o.log(), TokenCache: o.TokenCache, progress: p}
		if parent.Err() != nil {
			return errors.Join(append(errs, &StoppedError{Kind: r.Kind, Phase: p.phase(), Err: parent.Err()})...)
		}
		body, cuts := Encode(data, s.Limit())
		logTrim(o.log(), jsondoc.DumpsLen(data), len(body), s.Limit(), cuts)
		r.Body = body
		p.start(r.Kind)
		err := s.Send(ctx, r)
		switch {
		case err == nil:
			continue
		case parent.Err() != nil:
			// Stopped: the next ways are not tried either.
			return errors.Join(append(errs, &StoppedError{Kind: r.Kind, Phase: p.phase(), Err: parent.Err()})...)
		case budget > 0 && errors.Is(context.Cause(ctx), errBudget):
			err = &BudgetError{Budget: budget, Name: o.BudgetName, Err: err, Before: p.before()}
		case budget > 0 && (errors.Is(err, httpclient.ErrOutOfRetryTime) || retried(err)):
			err = &BudgetError{Budget: budget, Name: o.BudgetName, Err: err}
		}
		errs = append(errs, redact(red, fmt.Errorf("%s: %w", r.Kind, err)))
	}
	return errors.Join(errs...)
}

// policy is the HTTP policy of a signal's requests: ho, its zeros
// filled with the defaults Options.HTTP tells.
func policy(ho httpclient.Options) httpclient.Options {
	if ho.Timeout <= 0 {
		ho.Timeout = DefaultAttemptTimeout
	}
	if ho.Retries == 0 {
		ho.Retries = manyRetries
	}
	if ho.MaxWait == 0 {
		ho.MaxWait = maxWait
	}
	return ho
}

// retried tells a final answer that the budget, not the server, made
// final: one the HTTP policy retries (5xx but 501, 429).
func retried(err error) bool {
	var h *HTTPError
	return errors.As(err, &h) && (h.Status == http.StatusTooManyRequests || h.Status >= 500 && h.Status != http.StatusNotImplemented)
}

// logTrim warns about a body that had to be trimmed, or could not be.
func logTrim(log *slog.Logger, size, sent, limit int, cuts []Cut) {
	if size <= limit {
		return
	}
	what := "nothing could be trimmed (no deploy_stdout or deploy_stderr string)"
	if len(cuts) > 0 {
		what = "trimmed from the start of"
		for i, c := range cuts {
			if i > 0 {
				what += " and"
			}
			what += fmt.Sprintf(" %s (%d bytes)", c.Key, c.Bytes)
		}
	}
	log.Warn(fmt.Sprintf("Signal data is %d bytes, over the limit of %d: %s; sending %d bytes", size, limit, what, sent))
}
