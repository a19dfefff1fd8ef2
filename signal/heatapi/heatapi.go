// Package heatapi signals through the orchestration API (HEAT_SIGNAL):
// the deployment's stack user authenticates with Keystone, and the
// signal is a POST to the resource's signal URL at the catalog's public
// orchestration endpoint, as python-heatclient's resources.signal does
// (after looking up a bare stack id).
package heatapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

// Transport is the Heat API way out.
type Transport struct{}

// Limit is signal.MaxBody, under heat-api's max_json_body_size.
func (Transport) Limit() int { return signal.MaxBody }

// Send posts r.Body to
// {endpoint}/stacks/{name}/{uuid}/resources/{deploy_resource_name}/signal,
// as heatclient does. deploy_stack_id is "name/uuid" as Heat writes it,
// used as it is, slash kept; a bare id (or name) is looked up first. The
// resource name is quoted whole. A token refused once is replaced.
func (Transport) Send(ctx context.Context, r *signal.Request) error {
	if r.StackID == "" {
		return errors.New("the deploy_stack_id input is empty")
	}
	if err := r.Authenticate(ctx); err != nil {
		return err
	}
	endpoint, err := r.Keystone.Endpoint("orchestration", r.Region)
	if err != nil {
		return err
	}
	r.Log.Debug("Signalling to " + secret.RedactURL(endpoint))
	base := strings.TrimRight(endpoint, "/")
	stack := r.StackID
	if !qualified(stack) {
		if stack, err = lookup(ctx, r, base); err != nil {
			return fmt.Errorf("looking up stack %q: %w", r.StackID, err)
		}
	}
	url := base + "/stacks/" + stack + "/resources/" + Quote(r.Resource) + "/signal"
	resp, err := withToken(ctx, r, func(h http.Header) (*httpclient.Response, error) {
		h.Set("Content-Type", "application/json")
		return r.HTTP.Deliver(ctx, http.MethodPost, url, h, r.Body)
	})
	if err != nil {
		return err
	}
	r.Log.Debug(fmt.Sprintf("Response <Response [%d]> ", resp.Status))
	if resp.Status >= 200 && resp.Status < 300 {
		return nil
	}
	return signal.NewHTTPError(http.MethodPost, url, resp)
}

// Quote is Python's urllib.parse.quote(s, safe=""): every byte but
// letters, digits and "_.-~" as %XX.
func Quote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
