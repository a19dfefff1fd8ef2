// Package local is the "local" collector: every file of the configured
// directories is a JSON document whose key is the file's name (extension
// included, as in the reference).
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/pyos"
)

// Name is the collector's name.
const Name = "local"

// Config is the [local] group.
type Config struct{ Path []string }

// NewConfig is an empty configuration, for the registry.
func NewConfig() collectors.Config { return new(Config) }

// Options are [local]'s.
func (c *Config) Options() []config.Option {
	return config.InGroup(Name,
		config.Option{Name: "path", Default: []string{"/var/lib/os-collect-config/local-data"}, Help: "A directory whose JSON files are each collected as a key named after the file, in sorted order; repeat the option for several directories.", Into: &c.Path})
}

// New builds the collector.
func (c *Config) New(_ collectors.Shared, log *slog.Logger) (collectors.Collector, error) {
	return &Collector{Paths: c.Path, Log: log}, nil
}

// Watch is the directories: any file in them may change.
func (c *Config) Watch() (dirs, files []string) { return c.Path, nil }

// Collector reads directories of JSON files.
type Collector struct {
	Paths []string
	Log   *slog.Logger
}

// Collect reads every directory. Unlike the reference, a file that is not
// JSON or is world-writable, or a directory owned by another user or
// world-writable, is skipped with the reference's error line, and the
// other files are still collected (the reference dropped the whole
// collector, and with it every local key); so is a file that is not a
// regular one (a FIFO hung the reference, and SIGTERM could not stop it).
func (c *Collector) Collect(context.Context) ([]collectors.Entry, error) {
	if len(c.Paths) == 0 {
		return nil, collectors.ErrNotAvailable
	}
	var out []collectors.Entry
	for _, dir := range c.Paths {
		st, err := os.Stat(dir)
		if err != nil {
			c.Log.Warn(fmt.Sprintf("%s not found. Skipping", dir))
			continue
		}
		if insecure(c.Log, dir, st) {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			c.Log.Error(fmt.Sprintf("%s cannot be read (%s)", dir, pyos.ErrorString(err, dir)))
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if name[0] == '.' {
				continue
			}
			path := filepath.Join(dir, name)
			fst, err := os.Stat(path)
			if err != nil || fst.IsDir() {
				continue
			}
			if fst.Mode().Perm()&0o002 != 0 {
				c.Log.Error(fmt.Sprintf("%s is world writable. This is a security risk.", path))
				continue
			}
			data, err := collectors.ReadFile(path)
			if errors.Is(err, collectors.ErrNotRegular) {
				c.Log.Error(err.Error() + "; skipped")
				continue
			}
			if err == nil {
				var doc pyjson.Value
				if doc, err = pyos.LoadsJSON(data); err == nil {
					out = append(out, collectors.Entry{Name: name, Content: doc})
					continue
				}
			}
			c.Log.Error(fmt.Sprintf("%s is not valid JSON (%v)", path, err))
		}
	}
	if len(out) == 0 {
		c.Log.Info(fmt.Sprintf("No local metadata found (%s)", pyjson.Repr(pyjson.StringList(c.Paths))))
	}
	// The reference sorts by name in the C locale: bytewise, stable.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// insecure reports (with the reference's lines) a directory another user
// owns or anyone may write to; group-writable is allowed.
func insecure(log *slog.Logger, dir string, st os.FileInfo) bool {
	bad := false
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		log.Error(fmt.Sprintf("%s is owned by another user. This is a security risk.", dir))
		bad = true
	}
	if st.Mode().Perm()&0o002 != 0 {
		log.Error(fmt.Sprintf("%s is world writable. This is a security risk.", dir))
		bad = true
	}
	return bad
}
