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
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
)

// Name is the collector's name.
const Name = "heat"

// Config is the [heat] group.
type Config struct {
	Creds                             keystone.Credentials
	StackID, ResourceName, RegionName string
}

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [heat]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name, append(collectors.KeystoneOptions(&c.Creds),
		config.Option{Name: "stack-id", Help: "The id of the stack the node's deployments belong to.", Into: &c.StackID},
		config.Option{Name: "resource-name", Help: "The name of the node's resource in that stack, whose metadata is polled.", Into: &c.ResourceName},
		config.Option{Name: "region-name", Help: "The region whose Heat endpoint is used, from the Keystone catalog.", Into: &c.RegionName})...)
}

// New builds the collector. Its requests get 30 s each (the
// reference's clients had no timeout at all).
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	client, err := httpclient.New(globals.HTTP(30 * time.Second))
	if err != nil {
		return nil, err
	}
	session := globals.Keystone(c.Creds, client)
	// A cached token whose catalog lacks this endpoint is not taken.
	session.Needs = []keystone.Service{{Type: "orchestration", Region: c.RegionName}}
	return &Collector{Session: session, StackID: c.StackID, ResourceName: c.ResourceName,
		Region: c.RegionName, DeploymentKeys: globals.DeploymentKeys, Log: log}, nil
}

// Collector polls one resource's metadata. It lives across passes, and
// with it the Keystone token.
type Collector struct {
	Session                       *keystone.Session
	StackID, ResourceName, Region string
	DeploymentKeys                []string
	Log                           *slog.Logger
}

// Collect fetches the metadata.
func (c *Collector) Collect(ctx context.Context) ([]collectors.Entry, error) {
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
	doc, err := jsondoc.Loads(body.Metadata)
	if err != nil {
		return c.unavailable(fmt.Errorf("the metadata of %s is not JSON: %w", c.ResourceName, err))
	}
	if _, ok := doc.(*jsondoc.Object); !ok {
		return c.unavailable(fmt.Errorf("the metadata of %s is not a JSON object", c.ResourceName))
	}
	return merger.Explode(Name, doc, c.DeploymentKeys, c.Log), nil
}

func (c *Collector) unavailable(err error) ([]collectors.Entry, error) {
	return nil, collectors.Unavailable(err)
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
