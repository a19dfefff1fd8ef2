package signal

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// statusCarrier is an error that carries the HTTP status a server
// answered (HTTPError; Zaqar's client's StatusError).
type statusCarrier interface {
	error
	HTTPStatus() int
}

// HTTPStatus is e's Status.
func (e *HTTPError) HTTPStatus() int { return e.Status }

// AuthenticatedSend authenticates s (Authenticate) and runs send, which
// signals with s's token at an endpoint of s's catalog. A token and
// catalog from the token cache may be out of date: the undercloud may
// have moved its API since an earlier process kept them. So send's
// requests, with a cached catalog, are not retried when they get no
// answer; and if send fails without an answer, or with a 404, the cache
// entry is dropped (one WARNING, without secrets), s authenticates again
// and send runs once more, with the new catalog, by the usual retry
// policy, within what is left of the budget. With a catalog Keystone has
// just given, a failure is final. A refused token (401) is send's to
// replace, cached or not.
func (r *Request) AuthenticatedSend(ctx context.Context, s *keystone.Session, send func(ctx context.Context) error) error {
	if err := r.Authenticate(ctx, s); err != nil {
		return err
	}
	if !s.Cached() {
		return send(ctx)
	}
	token, _ := s.Token(ctx) // the one in memory: no request
	err := send(httpclient.WithUnansweredFinal(ctx))
	if err == nil || ctx.Err() != nil || !stale(err) {
		return err
	}
	// A server's words may echo what it was sent.
	cause := secret.NewRedactor(s.Creds.Password.Reveal(), token).Redact(err.Error())
	r.Log.Warn(fmt.Sprintf("%s: an endpoint of the cached Keystone catalog failed (%s); dropping the cached Keystone token and authenticating again",
		r.Kind, cause))
	s.Invalidate()
	if err := r.Authenticate(ctx, s); err != nil {
		return err
	}
	return send(ctx)
}

// stale tells a failure that an out-of-date endpoint explains: nothing
// answered there, or something that does not know the path (404).
func stale(err error) bool {
	var sc statusCarrier
	if errors.As(err, &sc) {
		return sc.HTTPStatus() == http.StatusNotFound
	}
	return errors.Is(err, httpclient.ErrNoAnswer)
}
