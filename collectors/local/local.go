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
	"strings"
	"syscall"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pyerr"
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
		config.Option{Name: "path", Default: []string{cache.DefaultDir + "/local-data"}, Help: "A directory whose JSON files are each collected as a key named after the file, in sorted order; repeat the option for several directories.", Into: &c.Path})
}

// New builds the collector.
func (c *Config) New(globals collectors.Globals, log *slog.Logger) (collectors.Collector, error) {
	return &Collector{Paths: c.Path, Log: log, Globals: globals}, nil
}

// Watch is the directories: any file in them may change.
func (c *Config) Watch() (dirs, files []string) { return c.Path, nil }

// Collector reads directories of JSON files.
type Collector struct {
	Paths []string
	Log   *slog.Logger
	// Globals give the cache, whose last committed data a bad file keeps
	// (none when its CacheDir is empty).
	Globals collectors.Globals
}

// Collect reads every directory. Unlike the reference, a file that cannot
// be used (not JSON, unreadable, world-writable,
// not a regular file, or in a directory owned by another user or
// world-writable) does not make the whole collector unavailable: its key
// keeps the data it was last committed with, read back from the cache,
// with one WARNING naming the file, and the other files are collected as
// usual. A key never committed is left out, with the reference's error
// line. Either way the source is degraded (collectors.Degraded), naming
// the file. A FIFO hung the reference, and SIGTERM could not stop it.
func (c *Collector) Collect(context.Context) ([]collectors.Entry, error) {
	if len(c.Paths) == 0 {
		return nil, collectors.ErrNotAvailable
	}
	var out []collectors.Entry
	var reasons []string
	// bad keeps name's last committed data for the file at path, which
	// cannot be used because of why (logged as line, the reference's
	// wording, when there is nothing to keep).
	bad := func(name, path, why, line string) {
		if doc, ok := c.Globals.LastGood(name); ok {
			c.Log.Warn(fmt.Sprintf("%s: %s; keeping the data key %s was last committed with", path, why, name))
			reasons = append(reasons, fmt.Sprintf("%s: %s; kept the last committed data", path, why))
			out = append(out, collectors.Entry{Name: name, Content: doc})
			return
		}
		if line != "" {
			c.Log.Error(line)
		}
		reasons = append(reasons, fmt.Sprintf("%s: %s; key %s not collected (never committed)", path, why, name))
	}
	for _, dir := range c.Paths {
		st, err := os.Stat(dir)
		if err != nil {
			c.Log.Warn(fmt.Sprintf("%s not found. Skipping", dir))
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			c.Log.Error(fmt.Sprintf("%s cannot be read (%s)", dir, pyerr.ErrorString(err, dir)))
			reasons = append(reasons, fmt.Sprintf("%s cannot be read (%s)", dir, pyerr.ErrorString(err, dir)))
			continue
		}
		insecureDir := insecure(c.Log, dir, st)
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
			if insecureDir != "" {
				bad(name, path, "in a directory that "+insecureDir, "") // the directory's line said it
				continue
			}
			if fst.Mode().Perm()&0o002 != 0 {
				line := fmt.Sprintf("%s is world writable. This is a security risk.", path)
				bad(name, path, "world writable, a security risk", line)
				continue
			}
			data, err := collectors.ReadFile(path)
			if errors.Is(err, collectors.ErrNotRegular) {
				bad(name, path, strings.TrimPrefix(err.Error(), path+" is "), err.Error()+"; skipped")
				continue
			}
			if err == nil {
				var doc jsondoc.Value
				doc, err = jsondoc.LoadsBytesLazy(data) // kept as data, never written again
				data = nil                              // the document is all that is kept
				if err == nil {
					out = append(out, collectors.Entry{Name: name, Content: doc})
					continue
				}
				bad(name, path, fmt.Sprintf("not valid JSON (%v)", err), fmt.Sprintf("%s is not valid JSON (%v)", path, err))
				continue
			}
			why := fmt.Sprintf("cannot be read (%s)", pyerr.ErrorString(err, path))
			bad(name, path, why, path+" "+why)
		}
	}
	if len(out) == 0 {
		c.Log.Info(fmt.Sprintf("No local metadata found (%s)", jsondoc.PyRepr(jsondoc.StringList(c.Paths))))
	}
	// The reference sorts by name in the C locale: bytewise, stable.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, collectors.Degraded(reasons)
}

// insecure reports (with the reference's lines) a directory another user
// owns or anyone may write to; group-writable is allowed. It returns what
// is wrong with it ("" when nothing is).
func insecure(log *slog.Logger, dir string, st os.FileInfo) string {
	var bad []string
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		log.Error(fmt.Sprintf("%s is owned by another user. This is a security risk.", dir))
		bad = append(bad, "is owned by another user")
	}
	if st.Mode().Perm()&0o002 != 0 {
		log.Error(fmt.Sprintf("%s is world writable. This is a security risk.", dir))
		bad = append(bad, "is world writable")
	}
	return strings.Join(bad, " and ")
}
