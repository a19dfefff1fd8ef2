package heatapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

// qualified tells a stack id that is already "name/uuid" (a slash after
// its first character), which needs no lookup, as heatclient tells it.
func qualified(stackID string) bool { return strings.Index(stackID, "/") > 0 }

// lookup asks heat-api for the "name/uuid" path of a bare stack id (or
// name), as heatclient does before a signal: GET {base}/stacks/{id},
// which heat-api answers with a redirect to .../stacks/{name}/{uuid}.
// The redirect is not followed: only its name/uuid is taken, and used
// with the catalog's endpoint, whatever host the Location names (heat-api
// behind a proxy often names its own), so the token goes nowhere else.
func (res *resource) lookup(ctx context.Context, r *signal.Request, base string) (string, error) {
	u := base + "/stacks/" + Quote(res.stack)
	resp, err := res.withToken(ctx, func(h http.Header) (*httpclient.Response, error) {
		return r.HTTP.Do(httpclient.WithoutRedirects(ctx), http.MethodGet, u, h, nil)
	})
	if err != nil {
		return "", err
	}
	if resp.Status < 300 || resp.Status > 399 {
		if resp.Status < 300 {
			return "", fmt.Errorf("GET %s: HTTP %d, not the redirect to the stack's name/id", secret.RedactURL(u), resp.Status)
		}
		return "", signal.NewHTTPError(http.MethodGet, u, resp)
	}
	path, err := stackPath(u, resp.Header.Get("Location"))
	if err != nil {
		return "", fmt.Errorf("GET %s: HTTP %d: %w", secret.RedactURL(u), resp.Status, err)
	}
	r.Log.Debug(fmt.Sprintf("Stack %s is %s", res.stack, path))
	return path, nil
}

// stackPath is the "name/uuid" that a lookup's Location ends with, as it
// is escaped there: exactly two segments after the first "/stacks/",
// so that it can only name a stack under the endpoint. A relative Location is taken against the request.
func stackPath(request, location string) (string, error) {
	if location == "" {
		return "", errors.New("no Location in the redirect")
	}
	ref, err := url.Parse(location)
	if err != nil {
		return "", fmt.Errorf("the Location %q is not a URL", secret.RedactURL(location))
	}
	req, _ := url.Parse(request)
	p := req.ResolveReference(ref).EscapedPath()
	_, rest, ok := strings.Cut(p, "/stacks/")
	name, id, two := strings.Cut(rest, "/")
	if !ok || !two || strings.Contains(id, "/") || !segment(name) || !segment(id) {
		return "", fmt.Errorf("the Location %q does not end with /stacks/<name>/<id>", secret.RedactURL(location))
	}
	return name + "/" + id, nil
}

// segment tells a usable path segment, escaped: not empty, and neither a
// dot segment nor holding a slash once unescaped, as heat-api reads it.
func segment(s string) bool {
	u, err := url.PathUnescape(s)
	return err == nil && u != "" && u != "." && u != ".." && !strings.Contains(u, "/")
}

// withToken makes a request with the session's token, and once more with
// a new token if Heat refuses the first (401).
func (res *resource) withToken(ctx context.Context, send func(http.Header) (*httpclient.Response, error)) (*httpclient.Response, error) {
	for attempt := 0; ; attempt++ {
		token, err := res.session.Token(ctx)
		if err != nil {
			return nil, err
		}
		resp, err := send(http.Header{"X-Auth-Token": {token}, "Accept": {"application/json"}})
		if err != nil {
			return nil, err
		}
		if resp.Status == http.StatusUnauthorized && attempt == 0 {
			res.session.Invalidate()
			continue
		}
		return resp, nil
	}
}
