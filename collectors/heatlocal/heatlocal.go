// Package heatlocal is the "heat_local" collector: JSON files (by default
// heat-cfntools' /var/lib/heat-cfntools/cfn-init-data) merged key by key
// into one document under the key "heat_local".
package heatlocal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyerr"
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
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	return &Collector{Paths: c.Path, Log: log, Globals: globals}, nil
}

// Watch is the files: heat-cfntools writes them on this machine.
func (c *Config) Watch() (dirs, files []string) { return nil, c.Path }

// Collector reads the configured files.
type Collector struct {
	Paths []string
	Log   *slog.Logger
	// Globals give the cache, whose last committed data a bad file keeps
	// (none when its CacheDir is empty).
	Globals collectors.Globals
}

// Collect merges the files that exist, in order, with a shallow update
// (later files' top-level keys win). Nothing collected means not
// available. A file that exists but cannot be used (unreadable, not JSON,
// not a regular file) makes the source degraded:
// the key keeps, whole, the data it was last committed with (read back
// from the cache), with one WARNING naming the file, rather than a merge
// without that file's keys; a key never committed is the merge of the
// other files, with the reference's lines.
func (c *Collector) Collect(context.Context) ([]collectors.Entry, error) {
	var merged jsondoc.Value
	type badFile struct{ path, why, line string }
	var bad []badFile
	for _, p := range c.Paths {
		data, err := collectors.ReadFile(p)
		if err != nil {
			if _, statErr := os.Stat(p); statErr != nil {
				continue // missing, as os.path.exists says
			}
			why := fmt.Sprintf("cannot be read (%s)", pyerr.ErrorString(err, p))
			bad = append(bad, badFile{p, why, fmt.Sprintf("%s %s", p, why)})
			continue
		}
		doc, err := jsondoc.LoadsBytesOwned(data) // its strings share data, never written again
		data = nil
		if err != nil {
			bad = append(bad, badFile{p, fmt.Sprintf("not valid JSON (%v)", err), fmt.Sprintf("%s is not valid JSON (%v)", p, err)})
			continue
		}
		merged = update(merged, doc)
	}
	var reasons []string
	if len(bad) > 0 {
		if doc, ok := c.Globals.LastGood(Name); ok {
			for _, b := range bad {
				c.Log.Warn(fmt.Sprintf("%s: %s; keeping the data key %s was last committed with", b.path, b.why, Name))
				reasons = append(reasons, fmt.Sprintf("%s: %s; kept the last committed data", b.path, b.why))
			}
			return []collectors.Entry{{Name: Name, Content: doc}}, collectors.Degraded(reasons)
		}
		for _, b := range bad {
			if strings.Contains(b.why, "valid JSON") {
				c.Log.Info(b.line) // the reference's level
			} else {
				c.Log.Error(b.line)
			}
			reasons = append(reasons, fmt.Sprintf("%s: %s; left out of key %s (never committed)", b.path, b.why, Name))
		}
	}
	if !jsondoc.PyTruthy(merged) {
		c.Log.Info(fmt.Sprintf("Local metadata not found (%s)", jsondoc.PyRepr(jsondoc.StringList(c.Paths))))
		if len(reasons) > 0 {
			return nil, collectors.Unavailable(errors.New(strings.Join(reasons, "; ")))
		}
		return nil, collectors.ErrNotAvailable
	}
	return []collectors.Entry{{Name: Name, Content: merged}}, collectors.Degraded(reasons)
}

// update is Python's "final.update(value) if final else value" for the
// JSON objects heat-cfntools writes; a later non-object replaces.
func update(final, value jsondoc.Value) jsondoc.Value {
	fo, ok1 := final.(*jsondoc.Object)
	vo, ok2 := value.(*jsondoc.Object)
	if !jsondoc.PyTruthy(final) || !ok1 || !ok2 {
		return value
	}
	out := jsondoc.NewObject(fo.Len() + vo.Len())
	for i := 0; i < fo.Len(); i++ {
		out.Set(fo.At(i))
	}
	for i := 0; i < vo.Len(); i++ {
		out.Set(vo.At(i))
	}
	return out
}
