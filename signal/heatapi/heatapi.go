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

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
)

// Kind is a POST to the orchestration API's resource signal.
const Kind signal.Kind = "HEAT_SIGNAL"

// Transport is the Heat API way out: a deployment with a deploy_auth_url
// (the stack user's credentials, deploy_stack_id, deploy_resource_name).
var Transport = signal.Transport{Claims: claims, Build: build}

func claims(d *deployment.Deployment) bool {
	_, ok := d.Input("deploy_auth_url")
	return ok
}

func build(d *deployment.Deployment) (signal.Sender, error) {
	session, region, err := signal.StackUser(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Kind, err)
	}
	session.Needs = []keystone.Service{{Type: "orchestration", Region: region}}
	res := &resource{session: session, region: region}
	for _, in := range []struct {
		name string
		to   *string
	}{{"deploy_stack_id", &res.stack}, {"deploy_resource_name", &res.name}} {
		if *in.to, err = signal.StringInput(d, in.name); err != nil {
			return nil, fmt.Errorf("%s: %w", Kind, err)
		}
	}
	return res, nil
}

// resource is a signal to a deployment's resource, as its stack user.
type resource struct {
	session *keystone.Session
	// region is deploy_region_name ("" for any); stack and name are
	// deploy_stack_id and deploy_resource_name.
	region, stack, name string
}

func (*resource) Kind() signal.Kind { return Kind }

// Limit is signal.MaxBody, under heat-api's max_json_body_size.
func (*resource) Limit() int { return signal.MaxBody }

func (res *resource) Secrets() []string { return []string{res.session.Creds.Password.Reveal()} }

// Send posts r.Body to
// {endpoint}/stacks/{name}/{uuid}/resources/{deploy_resource_name}/signal,
// as heatclient does. deploy_stack_id is "name/uuid" as Heat writes it,
// used as it is, slash kept; a bare id (or name) is looked up first. The
// resource name is quoted whole. A token refused once is replaced; a
// cached catalog whose endpoint is gone is replaced once
// (Request.AuthenticatedSend).
func (res *resource) Send(ctx context.Context, r *signal.Request) error {
	if res.stack == "" {
		return errors.New("the deploy_stack_id input is empty")
	}
	return r.AuthenticatedSend(ctx, res.session, func(ctx context.Context) error { return res.send(ctx, r) })
}

// send signals with the session's token, at its catalog's endpoint.
func (res *resource) send(ctx context.Context, r *signal.Request) error {
	endpoint, err := res.session.Endpoint("orchestration", res.region)
	if err != nil {
		return err
	}
	r.Log.Debug("Signalling to " + secret.RedactURL(endpoint))
	base := strings.TrimRight(endpoint, "/")
	stack := res.stack
	if !qualified(stack) {
		if stack, err = res.lookup(ctx, r, base); err != nil {
			return fmt.Errorf("looking up stack %q: %w", res.stack, err)
		}
	}
	url := base + "/stacks/" + stack + "/resources/" + Quote(res.name) + "/signal"
	resp, err := res.withToken(ctx, func(h http.Header) (*httpclient.Response, error) {
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

// Session is the stack user's Keystone session (a signal.Authenticator:
// its token can be fetched while the hook runs).
func (res *resource) Session() *keystone.Session { return res.session }
