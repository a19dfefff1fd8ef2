package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// serviceNames gives the ~50 services of a busy TripleO controller: each one
// owns a template directory etc/<name>/ and a top-level metadata key <name>.
var serviceNames = []string{
	"nova", "neutron", "keystone", "glance", "cinder", "swift", "heat",
	"horizon", "ironic", "octavia", "designate", "barbican", "manila", "aodh",
	"ceilometer", "gnocchi", "panko", "placement", "mistral", "zaqar", "trove",
	"sahara", "magnum", "senlin", "watcher", "cloudkitty", "murano", "tacker",
	"masakari", "blazar", "freezer", "karbor", "monasca", "searchlight",
	"solum", "vitrage", "zun", "kuryr", "qinling", "cyborg", "rabbitmq",
	"mysql", "haproxy", "keepalived", "memcached", "redis", "ovn",
	"openvswitch", "httpd", "chrony",
}

// optKind says what kind of value an option holds; it decides both the
// generated value and how templates reference it.
type optKind int

const (
	kString optKind = iota
	kInt
	kBool
	kFloat
	kList
)

type poolOption struct {
	name string
	kind optKind
}

// optionPool holds option names seen in real OpenStack config files; each
// service gets a random subset, so templates differ between services.
var optionPool = []poolOption{
	{"rpc_response_timeout", kInt}, {"executor_thread_pool_size", kInt},
	{"max_retries", kInt}, {"retry_interval", kInt}, {"host", kString},
	{"state_path", kString}, {"lock_path", kString}, {"log_dir", kString},
	{"use_syslog", kBool}, {"syslog_log_facility", kString},
	{"periodic_interval", kInt}, {"report_interval", kInt},
	{"service_down_time", kInt}, {"api_workers", kInt}, {"rpc_workers", kInt},
	{"enable_proxy_headers_parsing", kBool}, {"max_request_body_size", kInt},
	{"osapi_max_limit", kInt}, {"default_log_levels", kList},
	{"instance_name_template", kString}, {"allow_resize_to_same_host", kBool},
	{"cpu_allocation_ratio", kFloat}, {"ram_allocation_ratio", kFloat},
	{"disk_allocation_ratio", kFloat}, {"reserved_host_memory_mb", kInt},
	{"heal_instance_info_cache_interval", kInt}, {"vif_plugging_timeout", kInt},
	{"vif_plugging_is_fatal", kBool}, {"dhcp_agent_notification", kBool},
	{"allow_overlapping_ips", kBool}, {"core_plugin", kString},
	{"service_plugins", kList}, {"global_physnet_mtu", kInt}, {"l3_ha", kBool},
	{"max_l3_agents_per_router", kInt}, {"token_expiration", kInt},
	{"cache_backend", kString}, {"cache_expiration_time", kInt},
	{"memcache_pool_maxsize", kInt}, {"image_cache_dir", kString},
	{"image_size_cap", kInt}, {"enabled_backends", kList},
	{"default_volume_type", kString}, {"backup_driver", kString},
	{"nfs_shares_config", kString}, {"notification_driver", kString},
	{"notification_topics", kList}, {"heartbeat_timeout_threshold", kInt},
	{"kombu_reconnect_delay", kFloat}, {"amqp_durable_queues", kBool},
	{"rabbit_ha_queues", kBool}, {"connection_recycle_time", kInt},
	{"db_max_retries", kInt}, {"policy_file", kString},
	{"enforce_scope", kBool}, {"enforce_new_defaults", kBool},
	{"cors_allowed_origin", kString}, {"ssl_cert_file", kString},
	{"ssl_key_file", kString}, {"ssl_ca_file", kString}, {"insecure", kBool},
	{"region_name", kString}, {"endpoint_type", kString},
	{"timeout", kInt}, {"keepalive_timeout", kInt},
	{"client_socket_timeout", kInt}, {"tcp_keepidle", kInt},
	{"wsgi_keep_alive", kBool}, {"backlog", kInt},
	{"graceful_shutdown_timeout", kInt}, {"use_stderr", kBool},
	{"watch_log_file", kBool}, {"publish_errors", kBool},
	{"fatal_deprecations", kBool}, {"instance_format", kString},
	{"instance_uuid_format", kString}, {"sampling_rate", kFloat},
	{"quota_cores", kInt}, {"quota_instances", kInt}, {"quota_ram", kInt},
}

const (
	optsPerService     = 48
	backendsPerService = 24
	policyRules        = 100
	nodesInCluster     = 24
)

// Streams for the per-service random sources. Every service draws from its
// own streams so that one service's data never depends on another's, which
// is what lets the steady case change exactly one service.
const (
	streamShape = iota
	streamBase
	streamDeploy
	streamNode
	streamTemplates
	streamsPerService
)

// streamGlobal is the stream of the data shared by all services.
const streamGlobal = 1 << 32

func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

func serviceRand(seed uint64, idx, stream int) *rand.Rand {
	return newRand(seed, uint64(idx*streamsPerService+stream))
}

// service is the shape of one service: which options it has. Values are
// drawn per metadata layer.
type service struct {
	name  string
	index int
	opts  []poolOption
}

func newServices(seed uint64) []service {
	svcs := make([]service, len(serviceNames))
	for i, name := range serviceNames {
		r := serviceRand(seed, i, streamShape)
		perm := r.Perm(len(optionPool))
		opts := make([]poolOption, optsPerService)
		for j := range opts {
			opts[j] = optionPool[perm[j]]
		}
		svcs[i] = service{name: name, index: i, opts: opts}
	}
	return svcs
}

var (
	words = []string{
		"alpha", "bravo", "compute", "control", "storage", "edge", "default",
		"internal", "public", "admin", "backup", "primary", "secondary",
		"regionOne", "rack1", "rack2", "fast", "slow", "ceph", "lvm", "nfs",
	}
	floats   = []string{"16.0", "1.5", "1.0", "0.5", "0.75", "0.1", "2.0", "0.9"}
	logLevel = []string{"amqp=WARN", "amqplib=WARN", "boto=WARN", "qpid=WARN",
		"sqlalchemy=WARN", "suds=INFO", "oslo.messaging=INFO", "iso8601=WARN"}
	policyValues = []string{
		"rule:admin_or_owner", "role:admin", "",
		"role:reader and project_id:%(project_id)s",
		"rule:admin_api or (role:member and user_id:%(user_id)s)",
		"!", "rule:context_is_admin", "role:service or role:admin",
	}
	resources = []string{"servers", "volumes", "images", "networks", "ports",
		"routers", "flavors", "quotas", "snapshots", "stacks", "tokens",
		"users", "projects", "domains", "zones", "secrets", "shares",
		"alarms", "metrics", "loadbalancers"}
	actions = []string{"create", "delete", "get", "get_all", "update",
		"list", "show", "attach", "detach", "resize"}
)

func pick[T any](r *rand.Rand, l []T) T { return l[r.IntN(len(l))] }

func ip(r *rand.Rand) string { return fmt.Sprintf("192.0.2.%d", 2+r.IntN(250)) }

func password(r *rand.Rand) string {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 24)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func optionValue(r *rand.Rand, o poolOption, svc string) any {
	switch o.kind {
	case kInt:
		return 1 + r.IntN(3600)
	case kBool:
		return r.IntN(2) == 0
	case kFloat:
		return json.Number(pick(r, floats))
	case kList:
		n := 1 + r.IntN(4)
		l := make([]any, n)
		for i := range l {
			l[i] = pick(r, logLevel)
		}
		return l
	}
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf("/var/lib/%s/%s", svc, pick(r, words))
	case 1:
		return fmt.Sprintf("http://%s:%d/v2.1/%s", ip(r), 8000+r.IntN(1000), pick(r, words))
	}
	return pick(r, words)
}

// metaLayers returns the three metadata files plus the modified copy of the
// third one used by the steady case. Layer 1 is the full base config, layer
// 2 a Heat deployment overriding secrets, some options, policy rules and
// lists, layer 3 node-local overrides; deep merge applies them in order.
func metaLayers(seed uint64, svcs []service, changed int) (layers [3][]byte, modified []byte) {
	base := object{{"global", globalData(newRand(seed, streamGlobal))}}
	deploy := object{}
	node, nodeMod := object{}, object{}
	for _, s := range svcs {
		base.add(s.name, baseService(serviceRand(seed, s.index, streamBase), s))
		deploy.add(s.name, deployService(serviceRand(seed, s.index, streamDeploy), s))
		n := nodeService(serviceRand(seed, s.index, streamNode), s)
		node.add(s.name, n)
		if s.index == changed {
			n = changeService(n)
		}
		nodeMod.add(s.name, n)
	}
	layers = [3][]byte{encodeJSON(base), encodeJSON(deploy), encodeJSON(node)}
	return layers, encodeJSON(nodeMod)
}

func globalData(r *rand.Rand) object {
	nodes := make([]any, nodesInCluster)
	for i := range nodes {
		role := []string{"controller", "compute", "cephstorage"}[i%3]
		nodes[i] = object{
			{"name", fmt.Sprintf("overcloud-%s-%d", role, i/3)},
			{"ip", ip(r)},
			{"roles", []any{role, pick(r, words)}},
		}
	}
	return object{
		{"region", "regionOne"},
		{"domain", "overcloud.example.com"},
		{"rabbit", object{
			{"hosts", []any{"192.0.2.11", "192.0.2.12", "192.0.2.13"}},
			{"user", "guest"},
			{"password", password(r)},
			{"port", 5672},
			{"use_ssl", false},
		}},
		{"keystone", object{
			{"auth_url", "http://192.0.2.5:5000/v3"},
			{"admin_url", "http://192.0.2.5:35357/v3"},
			{"memcached_servers", []any{"192.0.2.11:11211", "192.0.2.12:11211"}},
		}},
		{"ntp_servers", []any{"0.pool.ntp.org", "1.pool.ntp.org"}},
		{"nodes", nodes},
	}
}

func baseService(r *rand.Rand, s service) object {
	opts := object{}
	for _, o := range s.opts {
		opts.add(o.name, optionValue(r, o, s.name))
	}
	return object{
		{"debug", false},
		{"verbose", true},
		{"workers", 4},
		{"bind_host", "0.0.0.0"},
		{"port", 8000 + 10*s.index},
		{"log_level", "INFO"},
		{"service_user", s.name},
		{"service_password", password(r)},
		{"description", description(s)},
		{"db", object{
			{"url", dbURL(s.name, password(r))},
			{"max_pool_size", 10},
			{"max_overflow", 20},
			{"idle_timeout", 3600},
		}},
		{"features", object{
			{"use_ssl", r.IntN(2) == 0},
			{"notifications", r.IntN(2) == 0},
			{"experimental", false},
			{"cpu_ratio", json.Number(pick(r, floats))},
		}},
		{"opts", opts},
		{"backends", backends(r, backendsPerService)},
		{"policy", policy(r, s.name, policyRules)},
		{"extra", object{
			{"display_name", displayName(s)},
			{"limits", object{{"max", 100 + r.IntN(900)}, {"burst", json.Number("1.5")}}},
			{"zones", []any{pick(r, words), pick(r, words)}},
		}},
	}
}

// description holds characters a template engine with HTML escaping would
// mangle; the reference renders them verbatim.
func description(s service) string {
	return fmt.Sprintf(`%s service <managed> by "os-apply-config" & friends`, s.name)
}

// displayName is non-ASCII for some services: inserted raw as a string,
// escaped as \uXXXX when its dict is dumped as JSON.
func displayName(s service) string {
	if s.index%4 == 0 {
		return "Dépôt " + strings.ToUpper(s.name) + " – région Ω"
	}
	return "Service " + s.name
}

func dbURL(name, pw string) string {
	return fmt.Sprintf("mysql+pymysql://%s:%s@192.0.2.10/%s?charset=utf8&read_default_file=/etc/my.cnf", name, pw, name)
}

func backends(r *rand.Rand, n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = object{
			{"name", fmt.Sprintf("be-%02d", i)},
			{"host", ip(r)},
			{"port", 1024 + r.IntN(60000)},
			{"weight", json.Number(pick(r, floats))},
			{"enabled", r.IntN(4) != 0},
			{"tags", []any{pick(r, words), pick(r, words)}},
		}
	}
	return l
}

func policy(r *rand.Rand, svc string, n int) object {
	o := object{}
	for _, k := range r.Perm(len(resources) * len(actions))[:n] {
		key := fmt.Sprintf("%s:%s:%s", svc, resources[k/len(actions)], actions[k%len(actions)])
		o.add(key, pick(r, policyValues))
	}
	return o
}

// deployService overrides keys of the base layer: scalars, nested dicts
// (merged key by key), lists (replaced whole), a dict replaced by null, and
// new policy keys appended after the existing ones.
func deployService(r *rand.Rand, s service) object {
	opts := object{}
	for i, j := range r.Perm(len(s.opts))[:6] {
		o := s.opts[j]
		if i == 0 {
			opts.add(o.name, nil) // null overrides; renders empty
			continue
		}
		opts.add(o.name, optionValue(r, o, s.name))
	}
	pol := policy(r, s.name, 12)
	pol.add(s.name+":deployment:override", "role:admin")
	d := object{
		{"service_password", password(r)},
		{"db", object{{"url", dbURL(s.name, password(r))}}},
		{"opts", opts},
		{"features", object{{"notifications", true}}},
		{"policy", pol},
	}
	if s.index%3 == 0 {
		d.add("backends", backends(r, 8))
	}
	if s.index%7 == 3 {
		d.add("extra", nil)
	}
	return d
}

// nodeService holds the node-local values: bind address, worker count, and
// a few flags.
func nodeService(r *rand.Rand, s service) object {
	opts := object{}
	for _, j := range r.Perm(len(s.opts))[:2] {
		opts.add(s.opts[j].name, optionValue(r, s.opts[j], s.name))
	}
	return object{
		{"bind_host", ip(r)},
		{"workers", 2 + r.IntN(15)},
		{"debug", s.index%10 == 0},
		{"features", object{{"experimental", s.index%5 == 0}}},
		{"opts", opts},
	}
}

// changeService is the edit the steady case applies to one service: a new
// worker count, debug and experimental flipped (so its allow_empty:false
// template appears or disappears) and one option changed.
func changeService(o object) object {
	c := make(object, len(o))
	copy(c, o)
	for i, m := range c {
		switch m.key {
		case "workers":
			c[i].val = m.val.(int) + 3
		case "debug":
			c[i].val = !m.val.(bool)
		case "features":
			exp := m.val.(object)[0].val.(bool)
			c[i].val = object{{"experimental", !exp}}
		case "opts":
			opts := make(object, len(m.val.(object)))
			copy(opts, m.val.(object))
			opts[0].val = "changed-by-oacbench"
			c[i].val = opts
		}
	}
	return c
}
