// Package heat is the "heat" collector: a server's metadata from the
// native Heat API (Heat's POLL_SERVER_HEAT transport), after Keystone v3
// authentication, its deployments exploded into keys of their own.
package heat

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/pyjson"
)

// Name is the collector's name.
const Name = "heat"

// Collector polls one resource's metadata. It lives across passes, and
// with it the Keystone token.
type Collector struct {
	Session                       *keystone.Session
	StackID, ResourceName, Region string
	DeploymentKeys                []string
	Log                           *slog.Logger
}

// Collect fetches the metadata.
func (c *Collector) Collect(ctx context.Context) ([]merger.Entry, error) {
	cr := c.Session.Creds
	for _, need := range []struct{ name, value string }{
		{"auth_url", cr.AuthURL}, {"password", cr.Password.Reveal()}, {"project_id", cr.ProjectID},
		{"user_id", cr.UserID}, {"stack_id", c.StackID}, {"resource_name", c.ResourceName},
	} {
		if need.value == "" {
			c.Log.Info(fmt.Sprintf("No %s configured.", need.name))
			return nil, collectors.ErrNotConfigured
		}
	}
	if _, err := c.Session.Client(ctx); err != nil {
		return c.unavailable(err)
	}
	endpoint, err := c.Session.Endpoint("orchestration", c.Region)
	if err != nil {
		return c.unavailable(err)
	}
	var body struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	u := strings.TrimRight(endpoint, "/") + "/stacks/" + escapeKeepSlash(c.StackID) + "/resources/" + url.PathEscape(c.ResourceName) + "/metadata"
	if err := c.Session.Get(ctx, u, &body); err != nil {
		return c.unavailable(err)
	}
	doc, err := pyjson.Loads(body.Metadata)
	if err != nil {
		return c.unavailable(fmt.Errorf("the metadata of %s is not JSON: %v", c.ResourceName, err))
	}
	if _, ok := doc.(*pyjson.Object); !ok {
		return c.unavailable(fmt.Errorf("the metadata of %s is not a JSON object", c.ResourceName))
	}
	return merger.Explode(Name, doc, c.DeploymentKeys, c.Log), nil
}

func (c *Collector) unavailable(err error) ([]merger.Entry, error) {
	c.Log.Warn(err.Error())
	return nil, fmt.Errorf("%w: %v", collectors.ErrNotAvailable, err)
}

// escapeKeepSlash escapes a "name/uuid" stack id segment by segment, as
// heatclient does.
func escapeKeepSlash(s string) string {
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
