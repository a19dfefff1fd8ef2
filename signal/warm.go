package signal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// Authenticator is a Sender whose way begins by authenticating the stack
// user with Keystone (HEAT_SIGNAL, ZAQAR_SIGNAL): the one part of a
// signal that needs nothing of the hook's result, so it can be done
// while the hook runs.
type Authenticator interface {
	Sender
	// Session is the Keystone session the Sender authenticates with.
	Session() *keystone.Session
}

// WarmupTimeout bounds a warm-up: one authentication, retried as a
// signal's is, takes 0.15-0.5 s on a live cloud; past this, Keystone is
// the signal's problem to report.
const WarmupTimeout = 30 * time.Second

// Warmup is what makes d's signal find a valid Keystone token in the
// token cache dir: its stack user's authentication, kept there as
// heat-config-notify keeps it, for heat-config-notify, run after the
// hook, to read. It is nil when there is nothing to do: no cache (dir
// is ""), a signal that does not authenticate (a pre-signed URL, no
// signal), or malformed inputs (heat-config-notify will say which).
//
// The work says nothing: it returns what went wrong, secrets left out,
// and ends by WarmupTimeout or ctx's deadline, whichever is first.
// Requests go by the signal's HTTP policy (ho, as Options.HTTP).
func (ts Transports) Warmup(d *deployment.Deployment, dir string, ho httpclient.Options) func(ctx context.Context) error {
	if dir == "" {
		return nil
	}
	senders, err := ts.Plan(d)
	if err != nil {
		return nil
	}
	var auth []Authenticator
	for _, s := range senders {
		if a, ok := s.(Authenticator); ok {
			auth = append(auth, a)
		}
	}
	if len(auth) == 0 {
		return nil
	}
	return func(ctx context.Context) error { return warm(ctx, auth, dir, ho, redactor(senders)) }
}

// warm authenticates each of auth in turn (two ways of one user: the
// second finds the first's token).
func warm(ctx context.Context, auth []Authenticator, dir string, ho httpclient.Options, red *secret.Redactor) error {
	ctx, cancel := context.WithTimeout(ctx, WarmupTimeout)
	defer cancel()
	client, err := httpclient.New(policy(ho))
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	ctx = httpclient.WithRetryDeadline(ctx, deadline)
	var errs []error
	for _, a := range auth {
		r := &Request{Kind: a.Kind(), HTTP: client, Deadline: deadline, Log: logging.Discard, TokenCache: dir}
		if err := r.Authenticate(ctx, a.Session()); err != nil {
			errs = append(errs, redact(red, fmt.Errorf("%s: %w", r.Kind, err)))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}
