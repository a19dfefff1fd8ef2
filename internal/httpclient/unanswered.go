package httpclient

import (
	"context"
	"errors"
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

// ErrNoAnswer marks (errors.Is) the error of a request that got no
// answer at all: refused, reset, timed out, a failed TLS handshake.
// Nothing at the URL may be listening any more; a request its own
// context stopped is not one.
var ErrNoAnswer = errors.New("no answer")

// noAnswer is an error that is ErrNoAnswer without saying so.
type noAnswer struct{ error }

func (e noAnswer) Is(target error) bool { return target == ErrNoAnswer }

func (e noAnswer) Unwrap() error { return e.error }

type unansweredFinalKey struct{}

// WithUnansweredFinal returns a context under which a request that gets
// no answer is not tried again: the caller has a better URL to try
// before spending its retry budget on this one (an endpoint of a cached
// catalog, which a new catalog may have moved). An answer the policy
// retries (a 5xx, a 429) is retried as before.
func WithUnansweredFinal(ctx context.Context) context.Context {
	return context.WithValue(ctx, unansweredFinalKey{}, true)
}

// checkRetry is the retry policy: retryablehttp's, but under
// WithUnansweredFinal a request without an answer is final.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if final, _ := ctx.Value(unansweredFinalKey{}).(bool); final && resp == nil && err != nil && ctx.Err() == nil {
		return false, nil
	}
	return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
}

// unanswered is err, a request's failure, marked ErrNoAnswer unless
// ctx stopped it or it was answered by too many redirects.
func unanswered(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, errTooManyRedirects) {
		return err
	}
	return noAnswer{err}
}
