// Package signal sends a software deployment's result back to Heat, as
// heat-config-notify does: it reads from the deployment's derived inputs
// which way the signal goes (a pre-signed URL, a Zaqar queue, the Heat
// API, or none), serialises the data as Python's json.dumps does, trims
// deploy_stdout and deploy_stderr from the start to fit the way's size
// limit, and hands it to that way's Transport under one time budget.
//
// The transports are packages of their own (signal/presigned,
// signal/zaqarqueue, signal/heatapi) that import this one, so a program
// lists them, as data, in Options.Transports.
package signal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployment"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/secret"
)

// Kind is a way a signal leaves the node, named by Heat's
// signal_transport values.
type Kind string

const (
	// CFN is a POST to an EC2-signed heat-api-cfn URL.
	CFN Kind = "CFN_SIGNAL"
	// TempURL is a PUT to a Swift TempURL object that Heat polls.
	TempURL Kind = "TEMP_URL_SIGNAL"
	// Zaqar is a message posted to a queue that Heat pops.
	Zaqar Kind = "ZAQAR_SIGNAL"
	// Heat is a POST to the orchestration API's resource signal.
	Heat Kind = "HEAT_SIGNAL"
	// None is a deployment without signal inputs: nothing is sent.
	None Kind = "NO_SIGNAL"
)

const (
	// DefaultBudget bounds the retries of one Send: 5 minutes, well
	// within heat-config's deadline for one heat-config-notify run.
	DefaultBudget = 5 * time.Minute
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
	// DefaultBudget; negative, one attempt, under its Timeout.
	Budget time.Duration
	// BudgetName is the knob that sets Budget, quoted in the error when
	// it runs out (heat-config-notify's environment variable).
	BudgetName string
	// Transports are the ways out.
	Transports Transports
}

// Transport is one way out.
type Transport interface {
	// Limit is the largest body, in bytes, it may send.
	Limit() int
	// Send sends r. Its error says what the server answered, with
	// secrets left out; it logs debug lines only.
	Send(ctx context.Context, r *Request) error
}

// Transports are a program's ways out, by the inputs that select them.
type Transports struct {
	URL   Transport // deploy_signal_id: CFN and TempURL
	Zaqar Transport // deploy_queue_id
	Heat  Transport // deploy_auth_url
}

func (t Transports) of(k Kind) Transport {
	switch k {
	case CFN, TempURL:
		return t.URL
	case Zaqar:
		return t.Zaqar
	case Heat:
		return t.Heat
	}
	return nil
}

// Request is one signal on its way out.
type Request struct {
	Kind Kind
	// Method and URL are a URL signal's (deploy_signal_verb,
	// deploy_signal_id).
	Method, URL string
	// Keystone is the session of the deployment's stack user, for Zaqar
	// and Heat; Region is deploy_region_name ("" for any).
	Keystone *keystone.Session
	Region   string
	// Queue is deploy_queue_id; StackID and Resource are
	// deploy_stack_id and deploy_resource_name.
	Queue, StackID, Resource string
	// Body is the serialised signal data, trimmed to the Limit.
	Body []byte
	// HTTP makes the requests. Deadline is when retries stop (the
	// context carries it too, for HTTP's own retries).
	HTTP     *httpclient.Client
	Deadline time.Time
	Log      *slog.Logger

	progress *progress
}

// Authenticate gets r's Keystone session a token. It tries again, with
// the HTTP policy's backoff (from 200 ms, doubling, jittered), until the
// retry deadline, while Keystone's answers cannot be used (cut short,
// garbled, an error page under 200): the HTTP policy retries only failed
// requests and 5xx. A refusal or an unusable auth_url is final at once.
func (r *Request) Authenticate(ctx context.Context) error {
	for attempt, base := 1, 200*time.Millisecond; ; attempt, base = attempt+1, min(2*base, maxWait) {
		_, err := r.Keystone.Client(ctx)
		wait := base/2 + rand.N(base/2+1)
		if err == nil || keystone.Permanent(err) || ctx.Err() != nil || time.Now().Add(wait).After(r.Deadline) {
			return err
		}
		if r.progress != nil {
			r.progress.authRetry()
		}
		cause := secret.NewRedactor(r.Keystone.Creds.Password.Reveal()).Redact(err.Error())
		r.Log.Warn(fmt.Sprintf("%s: Keystone's answer could not be used (attempt %d: %s); next try in %.1fs, %s left of the retry budget",
			r.Kind, attempt, cause, wait.Seconds(), roundDuration(time.Until(r.Deadline))))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// Route is the ways Send would take for d, in order; [None] when it has
// no signal inputs. Malformed signal inputs are an error.
func Route(d *deployment.Deployment) ([]Kind, error) {
	reqs, err := plan(d)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return []Kind{None}, nil
	}
	kinds := make([]Kind, len(reqs))
	for i, r := range reqs {
		kinds[i] = r.Kind
	}
	return kinds, nil
}

// Send signals data for deployment d, as heat-config-notify does: to
// deploy_signal_id if present; then to deploy_queue_id if present, else
// through the Heat API if deploy_auth_url is. It returns the ways it
// took, [None] (and nil) when there was none. Every way is tried even if
// one failed; the error joins their failures.
func Send(ctx context.Context, d *deployment.Deployment, data pyjson.Value, o Options) ([]Kind, error) {
	reqs, err := plan(d)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		o.log().Debug("No signal inputs (NO_SIGNAL): nothing to send")
		return []Kind{None}, nil
	}
	kinds := make([]Kind, len(reqs))
	for i, r := range reqs {
		kinds[i] = r.Kind
	}
	return kinds, sendAll(ctx, reqs, data, o)
}

// SendURL signals data to a pre-signed URL with method (PUT, else POST)
// under the same policy as a deploy_signal_id.
func SendURL(ctx context.Context, method, url string, data pyjson.Value, o Options) error {
	return sendAll(ctx, []*Request{urlRequest(url, method)}, data, o)
}

func (o Options) log() *slog.Logger {
	if o.Log == nil {
		return logging.Discard
	}
	return o.Log
}

// sendAll sends each request under one budget.
func sendAll(ctx context.Context, reqs []*Request, data pyjson.Value, o Options) error {
	ho := o.HTTP
	if ho.Timeout <= 0 {
		ho.Timeout = DefaultAttemptTimeout
	}
	if ho.Retries == 0 {
		ho.Retries = manyRetries
	}
	if ho.MaxWait == 0 {
		ho.MaxWait = maxWait
	}
	budget := o.Budget
	switch {
	case budget == 0:
		budget = DefaultBudget
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

	red := redactor(reqs)
	var errs []error
	for _, r := range reqs {
		if parent.Err() != nil {
			return errors.Join(append(errs, &StoppedError{Kind: r.Kind, Phase: p.phase(), Err: parent.Err()})...)
		}
		t := o.Transports.of(r.Kind)
		if t == nil {
			errs = append(errs, fmt.Errorf("%s: no transport for it in this program", r.Kind))
			continue
		}
		if r.Keystone != nil {
			r.Keystone.HTTP = client.Standard()
		}
		r.HTTP, r.Deadline, r.Log, r.progress = client, deadline, o.log(), p
		body, cuts := Encode(data, t.Limit())
		logTrim(o.log(), len(pyjson.Dumps(data)), len(body), t.Limit(), cuts)
		r.Body = body
		p.start(r.Kind)
		err := t.Send(ctx, r)
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
