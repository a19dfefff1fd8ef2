// Package request is the "request" collector: one JSON document from a URL
// (a Swift temporary URL with Heat's POLL_TEMP_URL transport), its
// deployments exploded into keys of their own.
package request

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// Name is the collector's name.
const Name = "request"

// Config is the [request] group.
type Config struct {
	MetadataURL string
	Timeout     float64
}

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [request]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name,
		config.Option{Name: "metadata-url", Help: "The URL the metadata document is fetched from (such as Heat's pre-signed Swift TempURL).", Into: &c.MetadataURL},
		config.Option{Name: "timeout", Default: []string{"10"}, Help: "Seconds to wait for a connection and for each read from the server.", Into: &c.Timeout})
}

// New builds the collector.
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	client, err := httpclient.New(globals.HTTP(collectors.Seconds(c.Timeout)))
	if err != nil {
		return nil, err
	}
	return &Collector{URL: c.MetadataURL, DeploymentKeys: globals.DeploymentKeys, Client: client, Log: log}, nil
}

// Collector polls one URL with conditional GETs. It lives across passes:
// it remembers the ETag and Last-Modified of the last document, and the
// document, so an unchanged one costs a 304 and no parsing. (The reference
// sent a HEAD and a GET every pass, and its Last-Modified check never
// worked because it forgot between passes.)
type Collector struct {
	URL            string
	DeploymentKeys []string
	Client         *httpclient.Client
	Log            *slog.Logger

	mu            sync.Mutex
	etag, lastMod string
	last          jsondoc.Value
}

// Collect fetches the document, or reuses the last one on 304.
func (c *Collector) Collect(ctx context.Context) ([]collectors.Entry, error) {
	if c.URL == "" {
		c.Log.Info("No metadata_url configured.")
		return nil, collectors.ErrNotConfigured
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := http.Header{}
	if c.last != nil {
		if c.etag != "" {
			h.Set("If-None-Match", c.etag)
		}
		if c.lastMod != "" {
			h.Set("If-Modified-Since", c.lastMod)
		}
	}
	resp, err := c.Client.Get(ctx, c.URL, h)
	if err != nil {
		return nil, collectors.Unavailable(err)
	}
	switch {
	case resp.Status == http.StatusNotModified && c.last != nil:
		c.Log.Debug("Metadata not modified.", "url", secret.RedactURL(c.URL))
		return merger.Explode(Name, c.last, c.DeploymentKeys, c.Log), nil
	case resp.Status >= 400 || resp.Status == http.StatusNotModified:
		return nil, collectors.Unavailable(fmt.Errorf("%d %s for url: %s", resp.Status, http.StatusText(resp.Status), secret.RedactURL(c.URL)))
	}
	doc, err := jsondoc.LoadsBytes(resp.Body)
	if err == nil {
		if _, ok := doc.(*jsondoc.Object); !ok {
			err = fmt.Errorf("not a JSON object")
		}
	}
	if err != nil {
		return nil, collectors.Unavailable(fmt.Errorf("Failed to parse as json. (%w)", err))
	}
	c.last, c.etag, c.lastMod = doc, resp.Header.Get("ETag"), sendableDate(resp.Header, time.Now())
	return merger.Explode(Name, doc, c.DeploymentKeys, c.Log), nil
}

// sendableDate is the answer's Last-Modified if it can be sent back in
// If-Modified-Since, else "". It must parse (an odd one is ignored
// rather than fatal: the reference died), and not be later than the
// answer's Date (now, without one): a date ahead, from a server whose
// clock ran ahead or a proxy's nonsense, would have every change until
// then answered "not modified". RFC 9110 forbids a server to send one.
func sendableDate(h http.Header, now time.Time) string {
	lastMod := h.Get("Last-Modified")
	t, err := http.ParseTime(lastMod)
	if err != nil {
		return ""
	}
	if d, err := http.ParseTime(h.Get("Date")); err == nil {
		now = d
	}
	if t.After(now) {
		return ""
	}
	return lastMod
}
