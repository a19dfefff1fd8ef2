package httpclient

import (
	"context"
	"errors"
	"net/http"
)

type noRedirectKey struct{}

// WithoutRedirects returns a context under which a request's redirect
// (3xx) is the answer, with its Location, instead of being followed.
// The caller reads what it needs from it: a lookup whose answer is the
// redirect itself, and whose headers (an auth token) must not go to
// whatever host the Location names.
func WithoutRedirects(ctx context.Context) context.Context {
	return context.WithValue(ctx, noRedirectKey{}, true)
}

// maxRedirects is net/http's own limit, kept for the other requests.
const maxRedirects = 10

// errTooManyRedirects ends a request redirected more than maxRedirects
// times.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// checkRedirect follows redirects as net/http does, unless the request's
// context says not to (WithoutRedirects).
func checkRedirect(req *http.Request, via []*http.Request) error {
	if no, _ := req.Context().Value(noRedirectKey{}).(bool); no {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	return nil
}
