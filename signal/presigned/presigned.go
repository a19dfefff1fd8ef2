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

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

const (
	// CFN is a POST to an EC2-signed heat-api-cfn URL.
	CFN signal.Kind = "CFN_SIGNAL"
	// TempURL is a PUT to a Swift TempURL object that Heat polls.
	TempURL signal.Kind = "TEMP_URL_SIGNAL"
)

// Transport is the URL way out: a deployment with a deploy_signal_id,
// sent with its deploy_signal_verb.
var Transport = signal.Transport{Claims: claims, Build: build, Implied: CFN}

func claims(d *deployment.Deployment) bool {
	_, ok := d.Input("deploy_signal_id")
	return ok
}

func build(d *deployment.Deployment) (signal.Sender, error) {
	u, err := signal.StringInput(d, "deploy_signal_id")
	if err != nil {
		return nil, err
	}
	verb, _ := d.InputString("deploy_signal_verb") // absent or not a string: POST
	return New(verb, u), nil
}

// URL is a signal to a pre-signed URL.
type URL struct {
	method, url string
	// Now is the clock for the auth_ttl hint; nil means time.Now.
	Now func() time.Time
}

// New is a signal to url: a PUT only when verb is exactly that (a
// TempURL), else a POST (a CFN URL), as the reference.
func New(verb, url string) *URL {
	if verb == http.MethodPut {
		return &URL{method: http.MethodPut, url: url}
	}
	return &URL{method: http.MethodPost, url: url}
}

// Kind is TempURL for a PUT, else CFN.
func (u *URL) Kind() signal.Kind {
	if u.method == http.MethodPut {
		return TempURL
	}
	return CFN
}

// Limit is signal.MaxBody: heat-api-cfn's max_json_body_size applies;
// Swift would take more, but Heat reads the object back into the same
// signal handling.
func (*URL) Limit() int { return signal.MaxBody }

// harmlessParams are query parameters of signed URLs that are no secret
// and that messages may quote (the CFN hint quotes the Timestamp).
var harmlessParams = map[string]bool{"Timestamp": true, "SignatureMethod": true, "SignatureVersion": true, "temp_url_expires": true}

// Secrets are the URL's query values but the harmless ones, decoded and
// as written.
func (u *URL) Secrets() []string {
	parsed, err := url.Parse(u.url)
	if err != nil || u.url == "" {
		return nil
	}
	var vals []string
	for k, vs := range parsed.Query() {
		if !harmlessParams[k] {
			vals = append(vals, vs...)
		}
	}
	for _, kv := range strings.Split(parsed.RawQuery, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && !harmlessParams[k] {
			vals = append(vals, v)
		}
	}
	return vals
}

// Send sends r.Body to the URL with its method.
func (u *URL) Send(ctx context.Context, r *signal.Request) error {
	r.Log.Debug(fmt.Sprintf("Signaling to %s via %s", secret.RedactURL(u.url), u.method))
	resp, err := r.HTTP.Deliver(ctx, u.method, u.url, http.Header{"Content-Type": {"application/json"}}, r.Body)
	if err != nil {
		return err
	}
	r.Log.Debug(fmt.Sprintf("Response <Response [%d]> ", resp.Status))
	if resp.Status >= 200 && resp.Status < 300 {
		return nil
	}
	e := signal.NewHTTPError(u.method, u.url, resp)
	if (resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden) && isCFN(u.url) {
		e.Hint = u.authTTLHint()
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
func (u *URL) authTTLHint() string {
	hint := "the signed URL may have outlived Keystone's [credential] auth_ttl (15 minutes by default)"
	parsed, _ := url.Parse(u.url)
	signed, err := time.Parse("2006-01-02T15:04:05Z", parsed.Query().Get("Timestamp"))
	if err != nil {
		return hint
	}
	now := time.Now
	if u.Now != nil {
		now = u.Now
	}
	hint += ": it was signed at " + signed.Format(time.RFC3339)
	if age := now().Sub(signed).Round(time.Second); age >= 0 { // else the clocks disagree
		hint += fmt.Sprintf(", %s ago", age)
	}
	return hint
}
