// Package ec2 is the "ec2" collector: the instance's EC2-style metadata,
// read once and then kept (it does not change for an instance's life, and
// re-reading it from every node loads the metadata service): from the
// cache if it holds a non-empty ec2.json, else from an OpenStack config
// drive, else by walking the metadata service's tree.
package ec2

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/secret"
)

// Name is the collector's name.
const Name = "ec2"

// Config is the [ec2] group.
type Config struct {
	MetadataURL string
	Timeout     float64
}

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [ec2]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name,
		config.Option{Name: "metadata-url", Default: []string{"http://169.254.169.254/latest/meta-data"}, Help: "The EC2-style metadata service's URL; its tree is walked and collected as the ec2 key.", Into: &c.MetadataURL},
		config.Option{Name: "timeout", Default: []string{"10"}, Help: "Seconds to wait for a connection and for each read from the server.", Into: &c.Timeout})
}

// New builds the collector; it reads a config drive through the mount
// table, /proc/mounts.
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	client, err := httpclient.New(globals.HTTP(collectors.Seconds(c.Timeout)))
	if err != nil {
		return nil, err
	}
	return &Collector{URL: c.MetadataURL, CachePath: globals.CachePath(Name), Client: client, Log: log,
		ConfigDrive: ConfigDrive("/proc/mounts")}, nil
}

// Collector reads EC2 metadata.
type Collector struct {
	URL       string // metadata root, without the trailing slash
	CachePath string // the cache's ec2.json
	Client    *httpclient.Client
	Log       *slog.Logger
	// ConfigDrive reads a config drive's meta-data.json; nil skips it.
	ConfigDrive func(ctx context.Context) (jsondoc.Value, error)
}

// Collect returns the metadata, preferring what was already cached.
func (c *Collector) Collect(ctx context.Context) ([]collectors.Entry, error) {
	if data, err := os.ReadFile(c.CachePath); err == nil {
		if v, err := jsondoc.Loads(data); err != nil {
			c.Log.Warn(jsondoc.PythonError(err))
		} else if jsondoc.PyTruthy(v) {
			return []collectors.Entry{{Name: Name, Content: v}}, nil
		}
	}
	if c.ConfigDrive != nil {
		if v, err := c.ConfigDrive(ctx); err == nil && jsondoc.PyTruthy(v) {
			return []collectors.Entry{{Name: Name, Content: v}}, nil
		} else if err != nil {
			c.Log.Debug("no config drive: " + err.Error())
		}
	}
	fetches := 0
	v, err := c.fetch(ctx, c.URL+"/", 0, &fetches)
	if err != nil {
		return nil, collectors.Unavailable(err)
	}
	return []collectors.Entry{{Name: Name, Content: v}}, nil
}

// maxDepth bounds the walk: a server that lists itself must not loop.
const maxDepth = 20

// maxFetches bounds the requests of one walk: a listing of many entries
// that lists itself again would otherwise cost its length times the
// depth. A real instance's tree is some hundred entries.
const maxFetches = 4096

// fetch reads a value; a URL ending in "/" is a listing, one entry a line,
// "N=name" entries (public-keys) meaning the directory "N/". fetches
// counts the requests of the walk.
func (c *Collector) fetch(ctx context.Context, url string, depth int, fetches *int) (jsondoc.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("metadata tree deeper than %d at %s", maxDepth, secret.RedactURL(url))
	}
	if *fetches++; *fetches > maxFetches {
		return nil, fmt.Errorf("metadata tree larger than %d entries at %s", maxFetches, secret.RedactURL(url))
	}
	resp, err := c.Client.Get(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	if resp.Status >= 400 {
		return nil, fmt.Errorf("%d Client Error for url: %s", resp.Status, secret.RedactURL(url))
	}
	text := string(resp.Body)
	if !strings.HasSuffix(url, "/") {
		return text, nil
	}
	obj := jsondoc.NewObject(0)
	for _, sub := range strings.Split(text, "\n") {
		if sub == "" {
			continue // the reference crashed on an empty line
		}
		if i := strings.Index(sub, "="); i >= 0 {
			sub = sub[:i] + "/"
		}
		if !isName(strings.TrimSuffix(sub, "/")) {
			// A proxy's error page under 200, say: the reference walked
			// it and cached the page for the instance's life.
			return nil, fmt.Errorf("%s is not a metadata listing: it lists %.40q", secret.RedactURL(url), sub)
		}
		v, err := c.fetch(ctx, url+sub, depth+1, fetches)
		if err != nil {
			return nil, err
		}
		obj.Set(strings.TrimSuffix(sub, "/"), v)
	}
	return obj, nil
}

// isName tells a listing's entry: one path segment of the characters
// EC2 and Nova metadata names (and AWS tag keys) are made of.
func isName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-:+@,", r)) {
			return false
		}
	}
	return true
}
