// Package httpclient is the one place that decides how the agent talks
// HTTP, for the collectors, the signals to Heat and gophercloud's Keystone,
// Heat and Zaqar clients alike: deadlines, TLS verification and CA files, retries with capped
// backoff and jitter (github.com/hashicorp/go-retryablehttp), a cap on the
// size of what is read, and URLs in messages without their query strings
// (signed and temporary URLs carry credentials there).
package httpclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/internal/version"
)

// DefaultMaxBody is the default cap on a response body: 64 MiB.
const DefaultMaxBody = 64 << 20

// Options configure a client.
type Options struct {
	// Timeout bounds each attempt (connection, headers and body).
	Timeout time.Duration
	// CAFile, when set, is the PEM bundle that server certificates must
	// chain to (instead of the system's).
	CAFile string
	// Insecure turns certificate verification off (zaqar's
	// ssl-certificate-validation = false).
	Insecure bool
	// MaxBody caps what is read of a body (DefaultMaxBody when zero).
	MaxBody int64
	// MaxBodyOption names the option that sets MaxBody, in the error of
	// a body over it ("" names none).
	MaxBodyOption string
	// Retries is the number of retries after a failed attempt (connection
	// error or 5xx); backoff doubles from 200 ms up to 2 s (MaxWait), with
	// jitter.
	Retries int
	// MaxWait caps the wait between two attempts (2 s when zero).
	MaxWait time.Duration
}

// Client does GET requests under the policy.
type Client struct {
	rc      *retryablehttp.Client
	maxBody int64
	maxOpt  string
}

// ErrTooLarge is a body over the size cap.
var ErrTooLarge = errors.New("response body over the size limit")

// TooLarge is ErrTooLarge for a cap of max bytes set by option (when not
// ""), which the message names: what an operator must raise.
func TooLarge(max int64, option string) error {
	if option == "" {
		return fmt.Errorf("%w (%d bytes)", ErrTooLarge, max)
	}
	return fmt.Errorf("%w (%d bytes, %s)", ErrTooLarge, max, option)
}

// TLSConfig is the policy's TLS: at least 1.2, verification against the
// CA file when given (else the system's), off only when Insecure.
func TLSConfig(o Options) (*tls.Config, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure} //nolint:gosec // only when configured so
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", o.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	return tlsConf, nil
}

// New builds a client.
func New(o Options) (*Client, error) {
	tlsConf, err := TLSConfig(o)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConf
	if o.Timeout > 0 {
		transport.ResponseHeaderTimeout = o.Timeout
	}
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: transport, Timeout: o.Timeout, CheckRedirect: checkRedirect}
	rc.Logger = nil // it would log full URLs; callers log redacted ones
	rc.RetryMax = o.Retries
	rc.RetryWaitMin, rc.RetryWaitMax = 200*time.Millisecond, 2*time.Second
	if o.MaxWait > 0 {
		rc.RetryWaitMax = o.MaxWait
	}
	rc.Backoff = jitteredBackoff
	rc.CheckRetry = checkRetry
	// After the last retry, return the last response (a 5xx) instead of a
	// generic error, so the caller can say what the server answered.
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	max := o.MaxBody
	if max <= 0 {
		max = DefaultMaxBody
	}
	return &Client{rc: rc, maxBody: max, maxOpt: o.MaxBodyOption}, nil
}

// jitteredBackoff is exponential backoff, capped, with up to 50% jitter so
// nodes started together do not retry in step.
func jitteredBackoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	d := retryablehttp.DefaultBackoff(min, max, attempt, resp)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Response is what a GET returned.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Attempts is how many requests it took, when the context carried a
	// retry deadline (WithRetryDeadline); 0 otherwise.
	Attempts int
}

// Get fetches url with the extra headers. A body over the cap is
// ErrTooLarge. Errors name the URL without its query.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	return c.Do(ctx, http.MethodGet, rawURL, header, nil)
}

// Do is Get with another method and a request body (nil: none); a retry
// sends the same body again.
func (c *Client) Do(ctx context.Context, method, rawURL string, header http.Header, body []byte) (*Response, error) {
	resp, attempts, err := c.send(ctx, method, rawURL, header, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	got, err := readBody(resp.Body, declaredLength(resp), c.maxBody)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s %s: %w", method, secret.RedactURL(rawURL), TooLarge(c.maxBody, c.maxOpt))
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, secret.RedactURL(rawURL), redactErr(err))
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: got, Attempts: attempts.count()}, nil
}

// detailBody bounds what Deliver reads of an answer: enough for the words
// of an error.
const detailBody = 64 << 10

// Deliver is Do for a request whose answer matters by its status alone,
// a signal. The body of a 2xx answer is not read: the request was carried
// out whatever that body does (cut short, endless, a gigabyte), and
// reading it could only turn a success into a failure, and a retry into
// a duplicate. Another answer's body is read, up to 64 KiB, for the words
// of the error, and a failure to read it is no error.
func (c *Client) Deliver(ctx context.Context, method, rawURL string, header http.Header, body []byte) (*Response, error) {
	resp, attempts, err := c.send(ctx, method, rawURL, header, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Attempts: attempts.count()}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		out.Body, _ = io.ReadAll(io.LimitReader(resp.Body, detailBody))
	}
	return out, nil
}

// send makes a request under the policy and returns the answer with its
// body unread.
func (c *Client) send(ctx context.Context, method, rawURL string, header http.Header, body []byte) (*http.Response, *attempts, error) {
	var reqBody any
	if body != nil {
		reqBody = body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, rawURL, reqBody)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, secret.RedactURL(rawURL), redactErr(err))
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", version.UserAgent)
	rc, attempts := c.retrier(ctx, method, rawURL)
	resp, err := rc.Do(req)
	if err != nil {
		err = unanswered(ctx, fmt.Errorf("%s %s: %w%s", method, secret.RedactURL(rawURL), redactErr(err), attempts.String()))
		if attempts != nil && attempts.outOfTime {
			return nil, nil, outOfTime{err}
		}
		return nil, nil, err
	}
	return resp, attempts, nil
}

// redactErr words errors that would quote the URL (url.Error) without it.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Standard is an *http.Client under the same policy (retries, deadlines,
// TLS, body cap), for libraries that take one (gophercloud).
func (c *Client) Standard() *http.Client {
	std := c.rc.StandardClient()
	std.Transport = capped{next: deadlineAware{c: c, next: std.Transport}, max: c.maxBody, option: c.maxOpt}
	return std
}

// CloseIdleConnections closes the kept-alive connections no request
// uses now: a caller that will not talk to the server again for a long
// while frees the server's slot rather than holding it idle 90 s.
func (c *Client) CloseIdleConnections() { c.rc.HTTPClient.CloseIdleConnections() }

func (t capped) CloseIdleConnections() {
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// capped reads each body whole, under the cap, before handing it on: a
// body over the cap is ErrTooLarge at once, having cost about the cap (a
// library's json.Decoder would have doubled its buffer up to it), and one
// cut short is an error there too.
type capped struct {
	next   http.RoundTripper
	max    int64
	option string
}

func (t capped) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		// retryablehttp's last attempt may hand back both; net/http would
		// log "RoundTripper returned a response & error" to stderr, around
		// the structured log, and drop the response anyway.
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	body, err := readBody(resp.Body, declaredLength(resp), t.max)
	resp.Body.Close()
	if errors.Is(err, ErrTooLarge) {
		return nil, TooLarge(t.max, t.option)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return resp, nil
}
