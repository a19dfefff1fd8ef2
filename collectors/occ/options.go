package occ

import (
	"fmt"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/version"
)

// Config is os-collect-config's whole configuration: [DEFAULT],
// [keystone] (which the collectors that authenticate share), and each
// collector's own group.
type Config struct {
	Command            string
	CacheDir           string
	BackupCacheDir     string
	Collectors         []string
	OneTime            bool
	MinPollingInterval float64
	PollingInterval    float64
	PrintCachedir      bool
	Force              bool
	PrintOnly          bool
	DeploymentKey      []string
	Splay              float64
	Jitter             bool
	MaxMetadataBytes   int
	OneTimeTimeout     float64
	CommandTimeout     float64
	MetricsFile        string
	Keystone           struct {
		CacheDir string
		CacheTTL int
	}
	// Sources are the collectors' configurations, by name.
	Sources map[string]collectors.Config
	// ConfigFiles are the files read, in order (their hash tells a
	// configuration change).
	ConfigFiles []string

	// oslo.log's options, accepted without effect as in the reference.
	ignored struct {
		debug, watchLogFile, useSyslog, useJournal, useJSON                bool
		logConfigAppend, logDateFormat, logFile, logDir, syslogLogFacility string
	}
}

// newConfig is an empty configuration with a place for every collector
// of the registry.
func newConfig(registry []collectors.Registration) *Config {
	c := &Config{Sources: map[string]collectors.Config{}}
	for _, r := range registry {
		c.Sources[r.Name] = r.Config()
	}
	return c
}

// options are every option os-collect-config 12.0.0 registers on its
// command line, its collectors' included: [DEFAULT]'s (and ours, marked),
// oslo.log's, [keystone]'s, then each collector's in registry order.
func (c *Config) options(registry []collectors.Registration) config.Set {
	opts := []config.Option{
		{Name: "command", Short: "c", Into: &c.Command},
		{Name: "cachedir", Default: []string{"/var/lib/os-collect-config"}, Into: &c.CacheDir},
		{Name: "backup-cachedir", Default: []string{"/var/run/os-collect-config"}, Into: &c.BackupCacheDir},
		{Name: "collectors", Positional: true, Default: names(registry), Into: &c.Collectors},
		{Name: "one-time", Default: []string{"false"}, Into: &c.OneTime},
		{Name: "min-polling-interval", Default: []string{"1"}, Into: &c.MinPollingInterval},
		{Name: "polling-interval", Short: "i", Default: []string{"30"}, Into: &c.PollingInterval},
		{Name: "print-cachedir", Default: []string{"false"}, Into: &c.PrintCachedir},
		{Name: "force", Default: []string{"false"}, Into: &c.Force},
		{Name: "print", Dest: "print_only", Default: []string{"false"}, Into: &c.PrintOnly},
		{Name: "deployment-key", Default: []string{"deployments"}, Into: &c.DeploymentKey},
		{Name: "splay", Default: []string{"0"}, Into: &c.Splay},
		// Ours: randomize the sleeps so that a fleet does not poll in
		// step (see schedule); false keeps the reference's sleeps.
		{Name: "jitter", Default: []string{"true"}, Into: &c.Jitter},
		// Ours: the largest metadata document read from a server, in
		// bytes (64 MiB).
		{Name: "max-metadata-bytes", NonNegative: true, Default: []string{"67108864"}, Into: &c.MaxMetadataBytes},
		// Ours: with --one-time, give up after this many seconds (0:
		// never), naming what the run was waiting for.
		{Name: "one-time-timeout", NonNegative: true, Default: []string{"0"}, Into: &c.OneTimeTimeout},
		// Ours: the command's deadline in seconds (0: none). Four hours
		// is TripleO's default overcloud stack timeout: past it Heat has
		// given up on the deployment the command is applying.
		{Name: "command-timeout", NonNegative: true, Default: []string{"14400"}, Into: &c.CommandTimeout},
		// Ours: after each pass, write the metrics (docs/metrics.md) to
		// this file for node_exporter's textfile collector ("": none).
		{Name: "metrics-file", Into: &c.MetricsFile},

		{Name: "debug", Short: "d", Default: []string{"false"}, Into: &c.ignored.debug},
		{Name: "log-config-append", Aliases: []string{"log-config", "log_config"}, Into: &c.ignored.logConfigAppend},
		{Name: "log-date-format", Default: []string{"%Y-%m-%d %H:%M:%S"}, Into: &c.ignored.logDateFormat},
		{Name: "log-file", Aliases: []string{"logfile"}, Into: &c.ignored.logFile},
		{Name: "log-dir", Aliases: []string{"logdir"}, Into: &c.ignored.logDir},
		{Name: "watch-log-file", Default: []string{"false"}, Into: &c.ignored.watchLogFile},
		{Name: "use-syslog", Default: []string{"false"}, Into: &c.ignored.useSyslog},
		{Name: "use-journal", Default: []string{"false"}, Into: &c.ignored.useJournal},
		{Name: "syslog-log-facility", Default: []string{"LOG_USER"}, Into: &c.ignored.syslogLogFacility},
		{Name: "use-json", Default: []string{"false"}, Into: &c.ignored.useJSON},
	}
	opts = append(opts, config.InGroup("keystone",
		config.Option{Name: "cache_dir", Into: &c.Keystone.CacheDir},
		config.Option{Name: "cache_ttl", Default: []string{"1800"}, Into: &c.Keystone.CacheTTL})...)
	for _, r := range registry {
		opts = append(opts, c.Sources[r.Name].Options()...)
	}
	return config.Set{Prog: "os-collect-config", Version: version.Reference, Basename: "os-collect-config.conf", Options: opts}
}

// Parse builds the configuration from the command line (without the
// program name) and the files it names or the default ones.
func Parse(args []string, env config.Env) (*Config, error) {
	return parseWith(registry, args, env)
}

func parseWith(registry []collectors.Registration, args []string, env config.Env) (*Config, error) {
	c := newConfig(registry)
	set := c.options(registry)
	files, err := set.Parse(args, env)
	if err != nil {
		return nil, err
	}
	c.ConfigFiles = files
	if c.Force {
		c.OneTime = true
	}
	return c, nil
}

// CheckCollectors refuses unknown collector names with the reference's
// message (which it gives, as a traceback, before doing anything).
func (c *Config) CheckCollectors() error {
	var bad []pyjson.Value
	for _, n := range c.Collectors {
		if _, ok := c.Sources[n]; !ok {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("Unknown collectors %s. Valid collectors are: %s", pyjson.Repr(bad), pyjson.Repr(pyjson.StringList(names(registry))))
}

// Shared is what the collectors share of the configuration.
func (c *Config) Shared() collectors.Shared {
	return collectors.Shared{
		DeploymentKeys: c.DeploymentKey, MaxBody: int64(c.MaxMetadataBytes), CacheDir: c.CacheDir,
		KeystoneCacheDir: c.Keystone.CacheDir, KeystoneCacheTTL: time.Duration(c.Keystone.CacheTTL) * time.Second,
	}
}

func names(registry []collectors.Registration) []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.Name
	}
	return out
}

// Values is every option's value by "GROUP.dest" key, as the reference's
// oslo.config would report it (checked against it in the tests).
func (c *Config) Values() map[string]any {
	set := c.options(registry)
	return set.Values()
}
