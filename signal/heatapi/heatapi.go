// Package heatapi signals through the orchestration API (HEAT_SIGNAL):
// the deployment's stack user authenticates with Keystone, and the
// signal is a POST to the resource's signal URL at the catalog's public
// orchestration endpoint, as python-heatclient's resources.signal does.
package heatapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

// Transport is the Heat API way out.
type Transport struct{}

// Limit is signal.MaxBody, under heat-api's max_json_body_size.
func (Transport) Limit() int { return signal.MaxBody }

// Send posts r.Body to
// {endpoint}/stacks/{deploy_stack_id}/resources/{deploy_resource_name}/signal.
// The stack id is "name/uuid", so it needs no lookup and keeps its
// slash; the resource name is quoted whole, as heatclient does. A token
// refused once is replaced.
func (Transport) Send(ctx context.Context, r *signal.Request) error {
	if err := r.Authenticate(ctx); err != nil {
		return err
	}
	endpoint, err := r.Keystone.Endpoint("orchestration", r.Region)
	if err != nil {
		return err
	}
	r.Log.Debug("Signalling to " + secret.RedactURL(endpoint))
	url := strings.TrimRight(endpoint, "/") + "/stacks/" + r.StackID + "/resources/" + Quote(r.Resource) + "/signal"
	for attempt := 0; ; attempt++ {
		token, err := r.Keystone.Token(ctx)
		if err != nil {
			return err
		}
		h := http.Header{"X-Auth-Token": {token}, "Content-Type": {"application/json"}, "Accept": {"application/json"}}
		resp, err := r.HTTP.Deliver(ctx, http.MethodPost, url, h, r.Body)
		if err != nil {
			return err
		}
		if resp.Status == http.StatusUnauthorized && attempt == 0 {
			r.Keystone.Invalidate()
			continue
		}
		r.Log.Debug(fmt.Sprintf("Response <Response [%d]> ", resp.Status))
		if resp.Status >= 200 && resp.Status < 300 {
			return nil
		}
		return signal.NewHTTPError(http.MethodPost, url, resp)
	}
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
