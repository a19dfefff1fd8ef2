// Package presigned signals to a pre-signed URL (deploy_signal_id):
// CFN_SIGNAL's EC2-signed heat-api-cfn URL, by POST, and
// TEMP_URL_SIGNAL's Swift TempURL, by PUT. The URL goes out verbatim: the
// EC2 signature covers the exact query, so it must not be re-encoded.
package presigned

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

// Transport is the URL way out.
type Transport struct {
	// Now is the clock for the auth_ttl hint; nil means time.Now.
	Now func() time.Time
}

// Limit is signal.MaxBody: heat-api-cfn's max_json_body_size applies;
// Swift would take more, but Heat reads the object back into the same
// signal handling.
func (Transport) Limit() int { return signal.MaxBody }

// Send sends r.Body to r.URL with r.Method.
func (t Transport) Send(ctx context.Context, r *signal.Request) error {
	r.Log.Debug(fmt.Sprintf("Signaling to %s via %s", secret.RedactURL(r.URL), r.Method))
	resp, err := r.HTTP.Deliver(ctx, r.Method, r.URL, http.Header{"Content-Type": {"application/json"}}, r.Body)
	if err != nil {
		return err
	}
	r.Log.Debug(fmt.Sprintf("Response <Response [%d]> ", resp.Status))
	if resp.Status >= 200 && resp.Status < 300 {
		return nil
	}
	e := signal.NewHTTPError(r.Method, r.URL, resp)
	if (resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden) && isCFN(r.URL) {
		e.Hint = t.authTTLHint(r.URL)
	}
	return e
}

// isCFN tells an EC2-signed heat-api-cfn URL: its path or its query.
func isCFN(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	q := u.Query()
	return strings.Contains(u.EscapedPath(), "/signal/arn") || q.Has("AWSAccessKeyId") || q.Has("Signature")
}

// authTTLHint explains the usual cause of a refused CFN signal: Keystone
// refuses EC2 signatures whose Timestamp is older than auth_ttl, and a
// deployment's URL is signed when Heat creates it, not when it is used.
func (t Transport) authTTLHint(rawURL string) string {
	hint := "the signed URL may have outlived Keystone's [credential] auth_ttl (15 minutes by default)"
	u, _ := url.Parse(rawURL)
	signed, err := time.Parse("2006-01-02T15:04:05Z", u.Query().Get("Timestamp"))
	if err != nil {
		return hint
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	hint += ": it was signed at " + signed.Format(time.RFC3339)
	if age := now().Sub(signed).Round(time.Second); age >= 0 { // else the clocks disagree
		hint += fmt.Sprintf(", %s ago", age)
	}
	return hint
}
