package config

// kind is an option's type, as oslo.config declares it.
type kind int

const (
	str kind = iota
	float
	integer
	boolean
	multi // MultiStrOpt: repeated keys or flags, all kept
)

// option is one oslo.config option of os-collect-config 12.0.0: its group
// ("" for [DEFAULT]), name as declared (the CLI spelling), file key
// (dest), type, default, and where its value goes in Config.
type option struct {
	group, name, dest, short string
	kind                     kind
	def                      []string // nil: no default (None)
	secret                   bool
	aliases                  []string // deprecated names, accepted in files and flags
	positional               bool
	// nonNegative refuses values below zero (our new options; the
	// reference's own take what oslo.config takes).
	nonNegative bool
	// field points into Config; nil for options that are accepted and
	// ignored.
	field func(c *Config) any
}

// DefaultCollectors is the reference's collector order.
var DefaultCollectors = []string{"heat_local", "ec2", "cfn", "heat", "request", "local", "zaqar"}

// options lists every option the reference registers on its command line
// (including oslo.log's, accepted and ignored as the reference ignores
// them), read from the installed package. Setters fill Config.
var options = []option{
	{name: "command", short: "c", kind: str, field: func(c *Config) any { return &c.Command }},
	{name: "cachedir", kind: str, def: []string{"/var/lib/os-collect-config"}, field: func(c *Config) any { return &c.CacheDir }},
	{name: "backup-cachedir", kind: str, def: []string{"/var/run/os-collect-config"}, field: func(c *Config) any { return &c.BackupCacheDir }},
	{name: "collectors", kind: multi, positional: true, def: DefaultCollectors, field: func(c *Config) any { return &c.Collectors }},
	{name: "one-time", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.OneTime }},
	{name: "min-polling-interval", kind: float, def: []string{"1"}, field: func(c *Config) any { return &c.MinPollingInterval }},
	{name: "polling-interval", short: "i", kind: float, def: []string{"30"}, field: func(c *Config) any { return &c.PollingInterval }},
	{name: "print-cachedir", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.PrintCachedir }},
	{name: "force", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.Force }},
	{name: "print", dest: "print_only", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.PrintOnly }},
	{name: "deployment-key", kind: multi, def: []string{"deployments"}, field: func(c *Config) any { return &c.DeploymentKey }},
	{name: "splay", kind: float, def: []string{"0"}, field: func(c *Config) any { return &c.Splay }},
	// Ours, not the reference's: the largest metadata document read from
	// a server, in bytes (64 MiB).
	{name: "max-metadata-bytes", kind: integer, nonNegative: true, def: []string{"67108864"}, field: func(c *Config) any { return &c.MaxMetadataBytes }},
	// Ours: with --one-time, give up after this many seconds (0: never),
	// naming what the run was waiting for.
	{name: "one-time-timeout", kind: float, nonNegative: true, def: []string{"0"}, field: func(c *Config) any { return &c.OneTimeTimeout }},
	// Ours: the command's deadline in seconds (0: none). Four hours is
	// TripleO's default overcloud stack timeout: past it Heat has given
	// up on the deployment the command is applying.
	{name: "command-timeout", kind: float, nonNegative: true, def: []string{"14400"}, field: func(c *Config) any { return &c.CommandTimeout }},

	// oslo.log's command-line options: accepted, without effect, as in the
	// reference (spec §1.10).
	{name: "debug", short: "d", kind: boolean, def: []string{"false"}},
	{name: "log-config-append", kind: str, aliases: []string{"log-config", "log_config"}},
	{name: "log-date-format", kind: str},
	{name: "log-file", kind: str, aliases: []string{"logfile"}},
	{name: "log-dir", kind: str, aliases: []string{"logdir"}},
	{name: "watch-log-file", kind: boolean, def: []string{"false"}},
	{name: "use-syslog", kind: boolean, def: []string{"false"}},
	{name: "use-journal", kind: boolean, def: []string{"false"}},
	{name: "syslog-log-facility", kind: str},
	{name: "use-json", kind: boolean, def: []string{"false"}},

	{group: "ec2", name: "metadata-url", kind: str, def: []string{"http://169.254.169.254/latest/meta-data"}, field: func(c *Config) any { return &c.EC2.MetadataURL }},
	{group: "ec2", name: "timeout", kind: float, def: []string{"10"}, field: func(c *Config) any { return &c.EC2.Timeout }},

	{group: "cfn", name: "metadata-url", kind: str, field: func(c *Config) any { return &c.CFN.MetadataURL }},
	{group: "cfn", name: "heat-metadata-hint", kind: str, def: []string{"/var/lib/heat-cfntools/cfn-metadata-server"}, field: func(c *Config) any { return &c.CFN.HeatMetadataHint }},
	{group: "cfn", name: "ca_certificate", kind: str, field: func(c *Config) any { return &c.CFN.CACertificate }},
	{group: "cfn", name: "stack-name", kind: str, field: func(c *Config) any { return &c.CFN.StackName }},
	{group: "cfn", name: "path", kind: multi, field: func(c *Config) any { return &c.CFN.Path }},
	{group: "cfn", name: "secret-access-key", kind: str, secret: true, field: func(c *Config) any { return &c.CFN.SecretAccessKey }},
	{group: "cfn", name: "access-key-id", kind: str, field: func(c *Config) any { return &c.CFN.AccessKeyID }},
	{group: "cfn", name: "deployment-key", kind: multi, def: []string{"deployments"}, field: func(c *Config) any { return &c.CFN.DeploymentKey }},
	{group: "cfn", name: "timeout", kind: float, def: []string{"10"}, field: func(c *Config) any { return &c.CFN.Timeout }},

	{group: "heat", name: "user-id", kind: str, field: func(c *Config) any { return &c.Heat.UserID }},
	{group: "heat", name: "password", kind: str, secret: true, field: func(c *Config) any { return &c.Heat.Password }},
	{group: "heat", name: "project-id", kind: str, field: func(c *Config) any { return &c.Heat.ProjectID }},
	{group: "heat", name: "auth-url", kind: str, field: func(c *Config) any { return &c.Heat.AuthURL }},
	{group: "heat", name: "stack-id", kind: str, field: func(c *Config) any { return &c.Heat.StackID }},
	{group: "heat", name: "resource-name", kind: str, field: func(c *Config) any { return &c.Heat.ResourceName }},
	{group: "heat", name: "region-name", kind: str, field: func(c *Config) any { return &c.Heat.RegionName }},

	{group: "heat_local", name: "path", kind: multi, def: []string{"/var/lib/heat-cfntools/cfn-init-data"}, field: func(c *Config) any { return &c.HeatLocal.Path }},
	{group: "local", name: "path", kind: multi, def: []string{"/var/lib/os-collect-config/local-data"}, field: func(c *Config) any { return &c.Local.Path }},

	{group: "request", name: "metadata-url", kind: str, field: func(c *Config) any { return &c.Request.MetadataURL }},
	{group: "request", name: "timeout", kind: float, def: []string{"10"}, field: func(c *Config) any { return &c.Request.Timeout }},

	{group: "keystone", name: "cache_dir", kind: str, field: func(c *Config) any { return &c.Keystone.CacheDir }},
	{group: "keystone", name: "cache_ttl", kind: integer, def: []string{"1800"}, field: func(c *Config) any { return &c.Keystone.CacheTTL }},

	{group: "zaqar", name: "user-id", kind: str, field: func(c *Config) any { return &c.Zaqar.UserID }},
	{group: "zaqar", name: "password", kind: str, secret: true, field: func(c *Config) any { return &c.Zaqar.Password }},
	{group: "zaqar", name: "project-id", kind: str, field: func(c *Config) any { return &c.Zaqar.ProjectID }},
	{group: "zaqar", name: "auth-url", kind: str, field: func(c *Config) any { return &c.Zaqar.AuthURL }},
	{group: "zaqar", name: "queue-id", kind: str, field: func(c *Config) any { return &c.Zaqar.QueueID }},
	{group: "zaqar", name: "use-websockets", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.Zaqar.UseWebsockets }},
	{group: "zaqar", name: "region-name", kind: str, field: func(c *Config) any { return &c.Zaqar.RegionName }},
	{group: "zaqar", name: "ssl-certificate-validation", kind: boolean, def: []string{"false"}, field: func(c *Config) any { return &c.Zaqar.SSLCertificateValidation }},
	{group: "zaqar", name: "ca-file", kind: str, field: func(c *Config) any { return &c.Zaqar.CAFile }},
}
