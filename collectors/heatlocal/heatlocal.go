// Package heatlocal is the "heat_local" collector: JSON files (by default
// heat-cfntools' /var/lib/heat-cfntools/cfn-init-data) merged key by key
// into one document under the key "heat_local".
package heatlocal

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/pyos"
)

// Name is the collector's name.
const Name = "heat_local"

// Config is the [heat_local] group.
type Config struct{ Path []string }

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [heat_local]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name,
		config.Option{Name: "path", Default: []string{"/var/lib/heat-cfntools/cfn-init-data"}, Help: "A JSON file read as the metadata of the heat_local key; repeat the option for several, merged key by key, a later file winning.", Into: &c.Path})
}

// New builds the collector.
func (c *Config) New(_ collectors.Shared, log *slog.Logger) (collectors.Collector, error) {
	return &Collector{Paths: c.Path, Log: log}, nil
}

// Watch is the files: heat-cfntools writes them on this machine.
func (c *Config) Watch() (dirs, files []string) { return nil, c.Path }

// Collector reads the configured files.
type Collector struct {
	Paths []string
	Log   *slog.Logger
}

// Collect merges the files that exist, in order, with a shallow update
// (later files' top-level keys win). Files that are not JSON are skipped
// with the reference's line. Nothing collected means not available.
func (c *Collector) Collect(context.Context) ([]collectors.Entry, error) {
	var merged pyjson.Value
	for _, p := range c.Paths {
		data, err := collectors.ReadFile(p)
		if err != nil {
			if _, statErr := os.Stat(p); statErr != nil {
				continue // missing, as os.path.exists says
			}
			c.Log.Error(fmt.Sprintf("%s cannot be read (%s)", p, pyos.ErrorString(err, p)))
			continue
		}
		doc, err := pyos.LoadsJSON(data)
		if err != nil {
			c.Log.Info(fmt.Sprintf("%s is not valid JSON (%v)", p, err))
			continue
		}
		merged = update(merged, doc)
	}
	if !pyjson.Truthy(merged) {
		c.Log.Info(fmt.Sprintf("Local metadata not found (%s)", pyjson.Repr(pyjson.StringList(c.Paths))))
		return nil, collectors.ErrNotAvailable
	}
	return []collectors.Entry{{Name: Name, Content: merged}}, nil
}

// update is Python's "final.update(value) if final else value" for the
// JSON objects heat-cfntools writes; a later non-object replaces.
func update(final, value pyjson.Value) pyjson.Value {
	fo, ok1 := final.(*pyjson.Object)
	vo, ok2 := value.(*pyjson.Object)
	if !pyjson.Truthy(final) || !ok1 || !ok2 {
		return value
	}
	out := pyjson.NewObject(fo.Len() + vo.Len())
	for i := 0; i < fo.Len(); i++ {
		out.Set(fo.At(i))
	}
	for i := 0; i < vo.Len(); i++ {
		out.Set(vo.At(i))
	}
	return out
}
