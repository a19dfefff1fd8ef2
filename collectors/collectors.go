// Package collectors is the seam between os-collect-config's loop and its
// metadata sources. A Collector returns (key, content) entries, or says
// that its source is not configured or not available right now. Each
// source is a package of its own with a Config: the options of its
// [group], read into it, and the collector it builds from them.
// os-collect-config registers them as data, one line each, in the
// reference's default order.
package collectors

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
)

// Collector is one metadata source.
type Collector interface {
	// Collect returns the source's entries in order: the collector's own
	// key first, then any exploded deployments.
	Collect(ctx context.Context) ([]Entry, error)
}

// Entry is one cache key and its content.
type Entry struct {
	Name    string
	Content jsondoc.Value
}

// ErrNotConfigured is a source that is not set up on this node (logged at
// debug level, as the reference does).
var ErrNotConfigured = errors.New("not configured")

// ErrNotAvailable is a configured source that could not be read this time
// (logged as "Source [NAME] Unavailable.").
var ErrNotAvailable = errors.New("unavailable")

// Unavailable is a configured source that could not be read this time
// because of cause: the loop logs the cause, then that the source is
// unavailable, as the reference does. It matches ErrNotAvailable and the
// cause with errors.Is and errors.As.
func Unavailable(cause error) error { return &unavailable{cause} }

type unavailable struct{ cause error }

func (u *unavailable) Error() string   { return u.cause.Error() }
func (u *unavailable) Unwrap() []error { return []error{ErrNotAvailable, u.cause} }

// Cause is what made a source unavailable, nil when it gave no reason.
func Cause(err error) error {
	var u *unavailable
	if errors.As(err, &u) {
		return u.cause
	}
	return nil
}

// ErrDegraded is a source that answered, but with some of its files
// unreadable: their keys keep their last committed data, or are left out
// when they have none (the status record says "degraded").
var ErrDegraded = errors.New("degraded")

// Degraded is the error of a source whose entries are good but
// incomplete, for reasons (one per file, naming it): the loop uses the
// entries as any others and marks the source degraded with the reasons.
// Nil when there are no reasons.
func Degraded(reasons []string) error {
	if len(reasons) == 0 {
		return nil
	}
	return &degraded{reasons}
}

type degraded struct{ reasons []string }

func (d *degraded) Error() string { return strings.Join(d.reasons, "; ") }
func (d *degraded) Unwrap() error { return ErrDegraded }

// Config is one collector's configuration.
type Config interface {
	// Options are the options of its group, pointing into it.
	Options() []config.Option
	// New builds the collector; an error (an unreadable CA file) makes
	// the source unavailable for the pass, saying why.
	New(globals Globals, log *slog.Logger) (Collector, error)
}

// Watcher is a Config whose sources live on this machine: a change to
// them wakes the daemon instead of waiting for the next poll.
type Watcher interface {
	// Watch returns directories any change in which counts, and files
	// (watched through their directories: they are often replaced by a
	// rename).
	Watch() (dirs, files []string)
}

// Pusher is a Collector whose source can tell the daemon of a change:
// the daemon runs Listen once the collector is built, and a pass reads
// the source as always, so nothing said while no one listened is lost.
type Pusher interface {
	// Listen keeps the source's push channel open until ctx ends,
	// calling p.Wake when a pass should run now; it returns when ctx
	// ends, its connections closed.
	Listen(ctx context.Context, p Push)
}

// Push is what the daemon gives a Pusher.
type Push struct {
	// Wake asks for a pass now; it never blocks.
	Wake func()
	// Backoff caps the wait between two attempts to listen again: the
	// polling interval, which a source that cannot push falls back to.
	Backoff time.Duration
	// Rand returns a number in [0, 1), After is the clock of the waits.
	Rand  func() float64
	After func(time.Duration) <-chan time.Time
}

// Registration is one collector a program knows.
type Registration struct {
	Name string
	// Config returns an empty configuration for the options to be read
	// into.
	Config func() Config
}

// Globals are the options of os-collect-config outside a collector's
// own group that every collector obeys ([DEFAULT] and [keystone]), and
// what they make: the HTTP policy, the cache, a Keystone session.
type Globals struct {
	// DeploymentKeys are [DEFAULT] deployment_key: the keys whose
	// deployments are exploded into keys of their own.
	DeploymentKeys []string
	// MaxBody is [DEFAULT] max_metadata_bytes.
	MaxBody int64
	// CacheDir is [DEFAULT] cachedir.
	CacheDir string
	// KeystoneCacheDir and KeystoneCacheTTL are [keystone] cache_dir and
	// cache_ttl.
	KeystoneCacheDir string
	KeystoneCacheTTL time.Duration
}

// HTTP is the HTTP policy's options for a collector whose requests take
// at most timeout each: the body cap, and two retries with backoff.
func (g Globals) HTTP(timeout time.Duration) httpclient.Options {
	return httpclient.Options{Timeout: timeout, MaxBody: g.MaxBody, MaxBodyOption: MaxBodyOption, Retries: 2}
}

// CachePath is the cache file of key (a collector may read back what the
// cache holds of it).
func (g Globals) CachePath(key string) string { return (&cache.Cache{Dir: g.CacheDir}).Path(key) }

// LastGood is the content key was last committed with (its KEY.json.last
// in the cache, which a command exited 0 with), and whether there is
// one: what a local source keeps of a file it cannot read.
func (g Globals) LastGood(key string) (jsondoc.Value, bool) {
	if g.CacheDir == "" || cache.CheckName(key) != nil {
		return nil, false
	}
	data, err := os.ReadFile(g.CachePath(key) + ".last")
	if err != nil {
		return nil, false
	}
	v, err := jsondoc.LoadsOwned(data)
	return v, err == nil
}

// Keystone is a session for creds, through client, that keeps its token
// as [keystone] says.
func (g Globals) Keystone(creds keystone.Credentials, client *httpclient.Client) *keystone.Session {
	return &keystone.Session{Creds: creds, HTTP: client.Standard(), CacheDir: g.KeystoneCacheDir, CacheTTL: g.KeystoneCacheTTL}
}

// KeystoneOptions are the options of a group whose collector
// authenticates to Keystone (heat, zaqar): who the node is, read into
// creds.
func KeystoneOptions(creds *keystone.Credentials) []config.Option {
	return []config.Option{
		{Name: "user-id", Help: "The Keystone user id the node authenticates as.", Into: &creds.UserID},
		{Name: "password", Help: "That user's password (never logged).", Into: &creds.Password},
		{Name: "project-id", Help: "The Keystone project id of that user.", Into: &creds.ProjectID},
		{Name: "auth-url", Help: "The Keystone URL to authenticate at, e.g. http://192.0.2.1:5000/v3.", Into: &creds.AuthURL},
	}
}

// Seconds is an option's seconds as a duration.
func Seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
