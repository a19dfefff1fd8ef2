package occ

import (
	"fmt"
	"github.com/tripleo-go/agent/collectors/all"
	"strings"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pystr"
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
		{Name: "command", Short: "c", Help: "The command run when the collected metadata changed, with OS_CONFIG_FILES naming the metadata files (usually os-refresh-config). With a command, os-collect-config keeps polling until stopped; without one, it prints what it collected as a JSON map and exits.", Into: &c.Command},
		{Name: "cachedir", Default: []string{cache.DefaultDir}, Help: "The directory of the metadata cache: what each key last collected and last committed, and os_config_files.json.", Into: &c.CacheDir},
		{Name: "backup-cachedir", Default: []string{cache.DefaultBackupDir}, Help: "A second copy of the cache, kept up to date with it.", Into: &c.BackupCacheDir},
		{Name: "collectors", Positional: true, Default: names(registry), Help: "The collectors to poll, in the order their keys are given to the command (a later key wins a conflict). Choose from: heat_local, ec2, cfn, heat, request, local, zaqar.", Into: &c.Collectors},
		{Name: "one-time", Default: []string{"false"}, Help: "Collect once, run the command if something changed, and exit with its status. Implied when no command is set.", Into: &c.OneTime},
		{Name: "min-polling-interval", Default: []string{"1"}, Help: "In the polling loop, the shortest pause in seconds between two passes: after a change the pause starts here and doubles up to polling-interval.", Into: &c.MinPollingInterval},
		{Name: "polling-interval", Short: "i", Default: []string{"30"}, Help: "In the polling loop, the longest pause in seconds between two passes, reached when nothing changes.", Into: &c.PollingInterval},
		{Name: "print-cachedir", Default: []string{"false"}, Help: "Print the cache directory and exit.", Into: &c.PrintCachedir},
		{Name: "force", Default: []string{"false"}, Help: "Run the command even if nothing changed. Implies --one-time.", Into: &c.Force},
		{Name: "print", Dest: "print_only", Default: []string{"false"}, Help: "Collect, print what was collected as a JSON map, and exit without running the command or committing anything.", Into: &c.PrintOnly},
		{Name: "deployment-key", Default: []string{"deployments"}, Help: "A key whose deployments list is split into keys of their own (one per deployment of the os-apply-config group), as Heat's structured deployments need; it can be repeated. Only looked for at the top of the metadata.", Into: &c.DeploymentKey},
		{Name: "splay", Default: []string{"0"}, Help: "Sleep a random number of seconds up to this before the first pass, so that nodes started together do not poll together (0: no sleep). Not used with --one-time or --force.", Into: &c.Splay},
		// Ours: randomize the sleeps so that a fleet does not poll in
		// step (see schedule); false keeps the reference's sleeps.
		{Name: "jitter", Default: []string{"true"}, Help: "Ours: randomize the pauses of the polling loop (each pause of the ramp lasts half to all of its length, and each node polls at a phase of its own), so that a fleet does not poll in step. --nojitter keeps the reference's exact pauses; no pause is ever longer than the reference's.", Into: &c.Jitter},
		// Ours: the largest metadata document read from a server, in
		// bytes (64 MiB).
		{Name: "max-metadata-bytes", NonNegative: true, Default: []string{"67108864"}, Help: "Ours: the largest metadata document read, in bytes (67108864 is 64 MiB); a larger one is refused.", Into: &c.MaxMetadataBytes},
		// Ours: with --one-time, give up after this many seconds (0:
		// never), naming what the run was waiting for.
		{Name: "one-time-timeout", NonNegative: true, Default: []string{"0"}, Help: "Ours: with --one-time, give up after this many seconds, naming what the run was waiting for, and exit 124 (0: never).", Into: &c.OneTimeTimeout},
		// Ours: the command's deadline in seconds (0: none); its default
		// is internal/deadline's.
		{Name: "command-timeout", NonNegative: true, Default: []string{fmt.Sprint(int64(deadline.DefaultCommand / time.Second))}, Help: "Ours: the command's deadline in seconds (0: none). Past it the command gets SIGTERM, then SIGKILL, and its pass fails. The default, four hours, is TripleO's overcloud stack timeout.", Into: &c.CommandTimeout},
		// Ours: after each pass, write the metrics (docs/metrics.md) to
		// this file for node_exporter's textfile collector ("": none).
		{Name: "metrics-file", Help: "Ours: after each pass, write the agent's metrics (docs/metrics.md) to this file, in Prometheus's text format, for node_exporter's textfile collector (e.g. /var/lib/prometheus/node-exporter/tripleo-agent.prom). Empty: none.", Into: &c.MetricsFile},

		{Name: "debug", Short: "d", Default: []string{"false"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.debug},
		{Name: "log-config-append", Aliases: []string{"log-config", "log_config"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.logConfigAppend},
		{Name: "log-date-format", Default: []string{"%Y-%m-%d %H:%M:%S"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.logDateFormat},
		{Name: "log-file", Aliases: []string{"logfile"}, Help: "Accepted for compatibility with oslo.log's option; no effect: the log goes to stderr, or to the journal under systemd.", Into: &c.ignored.logFile},
		{Name: "log-dir", Aliases: []string{"logdir"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.logDir},
		{Name: "watch-log-file", Default: []string{"false"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.watchLogFile},
		{Name: "use-syslog", Default: []string{"false"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.useSyslog},
		{Name: "use-journal", Default: []string{"false"}, Help: "Accepted for compatibility with oslo.log's option; no effect: under systemd the log goes to the journal natively.", Into: &c.ignored.useJournal},
		{Name: "syslog-log-facility", Default: []string{"LOG_USER"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.syslogLogFacility},
		{Name: "use-json", Default: []string{"false"}, Help: "Accepted for compatibility with oslo.log's option; no effect.", Into: &c.ignored.useJSON},
	}
	opts = append(opts, config.InGroup("keystone",
		config.Option{Name: "cache_dir", Help: "A directory where the Keystone tokens of the heat and zaqar collectors are kept across restarts.", Into: &c.Keystone.CacheDir},
		config.Option{Name: "cache_ttl", Default: []string{"1800"}, Help: "Seconds a kept Keystone token is reused before a new one is asked for.", Into: &c.Keystone.CacheTTL})...)
	for _, r := range registry {
		opts = append(opts, c.Sources[r.Name].Options()...)
	}
	return config.Set{Prog: "os-collect-config", Version: version.Reference, Basename: "os-collect-config.conf", Options: opts, Titles: titles, Describe: describe,
		Accepted: referenceOnly}
}

// referenceOnly are the options the reference registers that only a file
// sets and that this program has no use for: oslo.config's own, oslo.log's
// and, where the node has python3-oslo.concurrency (which the reference's
// clients bring in), oslo.concurrency's, with their old [DEFAULT] names
// (TestReferenceOptionsAreKnown lists the reference's). A file may hold
// them without a warning, as it may hold oslo.log's command-line options,
// which are declared above without effect.
var referenceOnly = []string{
	"oslo_concurrency.disable_process_locking", "oslo_concurrency.lock_path",
	"DEFAULT.disable_process_locking", "DEFAULT.lock_path",
	"DEFAULT.config_source", "DEFAULT.config_file", "DEFAULT.config_dir",
	"DEFAULT.use_stderr", "DEFAULT.use_eventlog", "DEFAULT.log_rotate_interval", "DEFAULT.log_rotate_interval_type",
	"DEFAULT.max_logfile_count", "DEFAULT.max_logfile_size_mb", "DEFAULT.log_rotation_type",
	"DEFAULT.logging_context_format_string", "DEFAULT.logging_default_format_string", "DEFAULT.logging_debug_format_suffix",
	"DEFAULT.logging_exception_prefix", "DEFAULT.logging_user_identity_format", "DEFAULT.default_log_levels",
	"DEFAULT.publish_errors", "DEFAULT.instance_format", "DEFAULT.instance_uuid_format",
	"DEFAULT.rate_limit_interval", "DEFAULT.rate_limit_burst", "DEFAULT.rate_limit_except_level",
}

// Parse builds the configuration from the command line (without the
// program name) and the files it names or the default ones.
func Parse(args []string, env config.Env) (*Config, error) {
	return parseWith(all.Collectors, args, env)
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
// message (which it gives, as a traceback, before doing anything), and
// says how to list several when a name holds a comma or a space (the
// reference reads "collectors = local,heat" as one name, "local,heat").
func (c *Config) CheckCollectors() error {
	var bad []jsondoc.Value
	var hints []string
	for _, n := range c.Collectors {
		if _, ok := c.Sources[n]; !ok {
			bad = append(bad, n)
			if h := oneNamePerLine(n); h != "" {
				hints = append(hints, h)
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	msg := fmt.Sprintf("Unknown collectors %s. Valid collectors are: %s", jsondoc.PyRepr(bad), jsondoc.PyRepr(jsondoc.StringList(names(all.Collectors))))
	if len(hints) > 0 {
		msg += ". The collectors option takes one name per line: " + strings.Join(hints, "; ")
	}
	return &CollectorsError{msg: msg}
}

// CollectorsError is a collectors list that names a collector there is
// not: a configuration error.
type CollectorsError struct{ msg string }

func (e *CollectorsError) Error() string { return e.msg }

// oneNamePerLine is the hint for a name that is a list written on one
// line ("local,heat", "local heat", `["local", "heat"]`): how to write
// it; "" for a name that is no list.
func oneNamePerLine(name string) string {
	if !strings.ContainsFunc(name, func(r rune) bool { return r == ',' || pystr.IsSpace(r) }) {
		return ""
	}
	parts := strings.FieldsFunc(name, func(r rune) bool { return strings.ContainsRune(",[]\"'", r) || pystr.IsSpace(r) })
	if len(parts) == 0 {
		return ""
	}
	lines := make([]string, len(parts))
	for i, p := range parts {
		lines[i] = fmt.Sprintf("%q", "collectors = "+p)
	}
	return fmt.Sprintf("instead of %s write %s, each on a line of its own (on the command line: %s)",
		jsondoc.PyReprString(name), strings.Join(lines, " and "), strings.Join(parts, " "))
}

// Globals are the options every collector obeys besides its group's.
func (c *Config) Globals() collectors.Globals {
	return collectors.Globals{
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
	set := c.options(all.Collectors)
	return set.Values()
}
