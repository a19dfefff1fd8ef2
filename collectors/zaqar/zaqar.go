// Package zaqar is the "zaqar" collector: a server's metadata from a
// Zaqar queue (Heat's ZAQAR_MESSAGE transport), after Keystone v3
// authentication. Heat posts a whole metadata snapshot to the queue on
// every change; each poll pops every pending message and keeps the
// newest (the reference popped one per poll, so it needed a poll per
// snapshot to catch up). An empty queue means no change: the last
// snapshot, from this process or from the cache, stands. Over a websocket
// a one-time pass also waits, a bounded time, for a snapshot to arrive;
// the daemon keeps its websocket subscribed instead (push.go).
package zaqar

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
)

// Name is the collector's name.
const Name = "zaqar"

// Config is the [zaqar] group.
type Config struct {
	Creds                                   keystone.Credentials
	QueueID, RegionName, CAFile             string
	UseWebsockets, SSLCertificateValidation bool
}

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [zaqar]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name, append(collectors.KeystoneOptions(&c.Creds),
		config.Option{Name: "queue-id", Help: "The Zaqar queue that Heat posts the node's metadata to.", Into: &c.QueueID},
		config.Option{Name: "use-websockets", Default: []string{"false"}, Help: "Talk to Zaqar over a websocket rather than HTTP; the daemon keeps it subscribed to the queue, so a posted change wakes it at once.", Into: &c.UseWebsockets},
		config.Option{Name: "region-name", Help: "The region whose Zaqar endpoint is used, from the Keystone catalog.", Into: &c.RegionName},
		config.Option{Name: "ssl-certificate-validation", Default: []string{"false"}, Help: "Verify Zaqar's TLS certificate.", Into: &c.SSLCertificateValidation},
		config.Option{Name: "ca-file", Help: "A CA certificate file to verify Zaqar's TLS certificate with.", Into: &c.CAFile})...)
}

// New builds the collector. Requests get 30 s each; Keystone's are
// retried, pops are not: a pop whose answer was lost has consumed the
// messages, and the next poll asks again.
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	ks, err := httpclient.New(globals.HTTP(30 * time.Second))
	if err != nil {
		return nil, err
	}
	o := globals.HTTP(30 * time.Second)
	o.Retries, o.Insecure = 0, !c.SSLCertificateValidation
	if c.SSLCertificateValidation {
		o.CAFile = c.CAFile
	}
	tlsConf, err := httpclient.TLSConfig(o) // the websocket's
	if err != nil {
		return nil, fmt.Errorf("[zaqar] ca_file: %w", err)
	}
	client, err := httpclient.New(o)
	if err != nil {
		return nil, fmt.Errorf("[zaqar] ca_file: %w", err)
	}
	session := globals.Keystone(c.Creds, ks)
	// A cached token whose catalog lacks the endpoint used is not taken.
	service := "messaging"
	if c.UseWebsockets {
		service = "messaging-websocket"
	}
	session.Needs = []keystone.Service{{Type: service, Region: c.RegionName}}
	return &Collector{
		Queue: &zaqar.Queue{Session: session, Name: c.QueueID, Region: c.RegionName,
			Client: client, TLS: tlsConf, Log: log, MaxFrame: globals.MaxBody, MaxFrameOption: collectors.MaxBodyOption},
		UseWebsockets: c.UseWebsockets, Validate: c.SSLCertificateValidation, CAFile: c.CAFile,
		DeploymentKeys: globals.DeploymentKeys, CachePath: globals.CachePath(Name), Log: log,
	}, nil
}

// Collector pops a queue.
type Collector struct {
	Queue          *zaqar.Queue
	UseWebsockets  bool
	Validate       bool   // [zaqar] ssl_certificate_validation
	CAFile         string // [zaqar] ca_file
	DeploymentKeys []string
	// WaitTimeout bounds the websocket wait for a new snapshot when
	// none is pending (30 s when zero).
	WaitTimeout time.Duration
	// CachePath is the cache file of the last snapshot (zaqar.json).
	CachePath string
	Log       *slog.Logger

	// SafetyRead, SubscriptionTTL and Now tune push (push.go): the
	// defaults when zero, time.Now when nil.
	SafetyRead, SubscriptionTTL time.Duration
	Now                         func() time.Time

	mu   sync.Mutex
	last jsondoc.Value
	// recent are the last documents read, digests of their JSON (push.go,
	// under mu).
	recent [][sha256.Size]byte
	// pmu guards push, shared with the goroutine of Listen.
	pmu  sync.Mutex
	push pushState
}

// Collect pops the queue.
func (c *Collector) Collect(ctx context.Context) ([]collectors.Entry, error) {
	cr := c.Queue.Session.Creds
	for _, need := range []struct{ name, value string }{
		{"auth_url", cr.AuthURL}, {"password", cr.Password.Reveal()}, {"project_id", cr.ProjectID},
		{"user_id", cr.UserID}, {"queue_id", c.Queue.Name},
	} {
		if need.value == "" {
			c.Log.Warn(fmt.Sprintf("No %s configured.", need.name)) // WARNING, as the reference
			return nil, collectors.ErrNotConfigured
		}
	}
	if c.Validate && c.CAFile == "" {
		c.Log.Warn("No CA file configured when flag ssl certificate validation is on.")
		return nil, collectors.ErrNotConfigured
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	newest, err := c.pop(ctx)
	if err != nil {
		return c.unavailable(err)
	}
	if newest == nil {
		if c.last == nil {
			c.last = c.fromCache()
		}
		if c.last == nil {
			return c.unavailable(fmt.Errorf("queue %s is empty and no earlier metadata is known", c.Queue.Name))
		}
		c.Log.Debug("Queue empty: the last metadata stands.", "queue", c.Queue.Name)
		return merger.Explode(Name, c.last, c.DeploymentKeys, c.Log), nil
	}
	c.last = newest
	c.remember(newest)
	return merger.Explode(Name, newest, c.DeploymentKeys, c.Log), nil
}

func (c *Collector) unavailable(err error) ([]collectors.Entry, error) {
	return nil, collectors.Unavailable(err)
}

// pop returns the newest snapshot, nil when there was none.
func (c *Collector) pop(ctx context.Context) (jsondoc.Value, error) {
	var raw json.RawMessage
	var err error
	c.Queue.Superseded = c.rememberJSON // the newest is remembered by Collect
	if c.UseWebsockets {
		var ok bool
		if raw, ok = c.popPushed(ctx); !ok {
			wait := c.WaitTimeout
			switch {
			case c.listening(): // the daemon's subscription does the waiting
				wait = 0
			case wait <= 0:
				wait = 30 * time.Second
			}
			raw, err = c.Queue.PopOrWait(ctx, wait)
		}
	} else {
		raw, err = c.Queue.PopNewest(ctx)
	}
	if err != nil || raw == nil {
		return nil, err
	}
	doc, err := jsondoc.Loads(raw)
	if err != nil {
		return nil, fmt.Errorf("a message of queue %s is not JSON: %w", c.Queue.Name, err)
	}
	if _, ok := doc.(*jsondoc.Object); !ok {
		return nil, fmt.Errorf("a message of queue %s is not a JSON object", c.Queue.Name)
	}
	return doc, nil
}

// fromCache reads the last snapshot this node stored (zaqar.json).
func (c *Collector) fromCache() jsondoc.Value {
	if c.CachePath == "" {
		return nil
	}
	data, err := os.ReadFile(c.CachePath)
	if err != nil {
		return nil
	}
	doc, err := jsondoc.Loads(data)
	if err != nil {
		return nil
	}
	if _, ok := doc.(*jsondoc.Object); !ok {
		return nil
	}
	return doc
}
