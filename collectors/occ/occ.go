// Package occ is the os-collect-config command: it collects metadata from
// the configured sources, caches it, and runs the command (typically
// os-refresh-config) with OS_CONFIG_FILES when something changed,
// committing the new data only when the command succeeds (spec §1.2-1.9).
//
// Two fixes over the reference: passes take a lock on the cache
// directory, so a manual --one-time and the daemon never interleave; and a
// source that is unavailable for a pass keeps its last good keys in
// OS_CONFIG_FILES instead of vanishing from it.
//
// Still to come (issue 4): the remaining collectors, reload on SIGHUP and
// on a changed config file, fsnotify wake-ups, conditional GETs, and
// journald fields.
package occ

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/cache"
	"github.com/tripleo-go/agent/collectors/cfn"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/collectors/ec2"
	"github.com/tripleo-go/agent/collectors/heat"
	"github.com/tripleo-go/agent/collectors/heatlocal"
	"github.com/tripleo-go/agent/collectors/local"
	"github.com/tripleo-go/agent/collectors/merger"
	"github.com/tripleo-go/agent/collectors/request"
	zaqarcollector "github.com/tripleo-go/agent/collectors/zaqar"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/internal/pyjson"
	"github.com/tripleo-go/agent/internal/pyos"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/systemd"
)

// Env is what the command gets from its process.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes /etc in the default config file search.
	Root string
	// Sleep waits between passes; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Hangup delivers SIGHUP (nil: none).
	Hangup <-chan os.Signal
	// Reexec replaces the process with a fresh start of the same command
	// line, as the reference re-executes itself; tests replace it.
	Reexec func() error
	// Notify talks to systemd (nil: not at all).
	Notify *systemd.Notifier
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	pyos.CloseInheritedFDs() // the command gets stdin, stdout and stderr only
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), Hangup: hup, Reexec: reexec, Notify: systemd.New()}
}

// reexec starts this program again with the same arguments and
// environment, in this process (argv[0] keeps the program's name for the
// multi-call binary).
func reexec() error {
	return syscall.Exec("/proc/self/exe", os.Args, os.Environ())
}

func (env Env) lookup(k string) (string, bool) {
	for _, kv := range env.Environ {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v, true
		}
	}
	return "", false
}

// factories build the collectors this build has, by name, from the
// configuration: collectors registered as data.
var factories = map[string]func(*config.Config, *slog.Logger) collectors.Collector{
	local.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		return &local.Collector{Paths: c.Local.Path, Log: log}
	},
	heatlocal.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		return &heatlocal.Collector{Paths: c.HeatLocal.Path, Log: log}
	},
	ec2.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		client, _ := httpclient.New(httpclient.Options{
			Timeout: seconds(c.EC2.Timeout), MaxBody: int64(c.MaxMetadataBytes), Retries: 2,
		})
		return &ec2.Collector{URL: c.EC2.MetadataURL, CachePath: (&cache.Cache{Dir: c.CacheDir}).Path(ec2.Name),
			Client: client, Log: log, ConfigDrive: ec2.ConfigDrive("/proc/mounts")}
	},
	request.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		client, _ := httpclient.New(httpclient.Options{ // no CA file: no error
			Timeout: seconds(c.Request.Timeout), MaxBody: int64(c.MaxMetadataBytes), Retries: 2,
		})
		return &request.Collector{URL: c.Request.MetadataURL, DeploymentKeys: c.DeploymentKey, Client: client, Log: log}
	},
	cfn.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		client, err := httpclient.New(httpclient.Options{
			Timeout: seconds(c.CFN.Timeout), CAFile: c.CFN.CACertificate, MaxBody: int64(c.MaxMetadataBytes), Retries: 2,
		})
		if err != nil {
			return broken{fmt.Errorf("[cfn] ca_certificate: %w", err)}
		}
		return &cfn.Collector{Client: client, Log: log, Config: cfn.Config{
			MetadataURL: c.CFN.MetadataURL, HintFile: c.CFN.HeatMetadataHint, StackName: c.CFN.StackName,
			AccessKeyID: c.CFN.AccessKeyID, SecretAccessKey: c.CFN.SecretAccessKey, Paths: c.CFN.Path,
			DeploymentKeys: c.CFN.DeploymentKey,
		}}
	},
	heat.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		// The reference's clients had no timeout at all.
		client, _ := httpclient.New(httpclient.Options{Timeout: 30 * time.Second, MaxBody: int64(c.MaxMetadataBytes), Retries: 2})
		return &heat.Collector{
			Session: keystoneSession(c, client, c.Heat.AuthURL, c.Heat.UserID, c.Heat.ProjectID, c.Heat.Password),
			StackID: c.Heat.StackID, ResourceName: c.Heat.ResourceName, Region: c.Heat.RegionName,
			DeploymentKeys: c.DeploymentKey, Log: log,
		}
	},
	zaqarcollector.Name: func(c *config.Config, log *slog.Logger) collectors.Collector {
		ks, _ := httpclient.New(httpclient.Options{Timeout: 30 * time.Second, MaxBody: int64(c.MaxMetadataBytes), Retries: 2})
		z := c.Zaqar
		opts := httpclient.Options{Timeout: 30 * time.Second, MaxBody: int64(c.MaxMetadataBytes), Insecure: !z.SSLCertificateValidation}
		if z.SSLCertificateValidation {
			opts.CAFile = z.CAFile
		}
		client, err := httpclient.New(opts)
		if err != nil && z.CAFile != "" {
			return broken{fmt.Errorf("[zaqar] ca_file: %w", err)}
		}
		tlsConf, _ := httpclient.TLSConfig(opts)
		// Pops are not retried: a pop whose answer was lost has consumed
		// the messages; the next poll asks again.
		return &zaqarcollector.Collector{
			Queue: &zaqar.Queue{Session: keystoneSession(c, ks, z.AuthURL, z.UserID, z.ProjectID, z.Password),
				Name: z.QueueID, Region: z.RegionName, Client: client, TLS: tlsConf, Log: log},
			UseWebsockets: z.UseWebsockets, Validate: z.SSLCertificateValidation, CAFile: z.CAFile,
			DeploymentKeys: c.DeploymentKey, CachePath: (&cache.Cache{Dir: c.CacheDir}).Path(zaqarcollector.Name), Log: log,
		}
	},
}

func keystoneSession(c *config.Config, client *httpclient.Client, authURL, userID, projectID string, password secret.String) *keystone.Session {
	return &keystone.Session{
		Creds: keystone.Credentials{AuthURL: authURL, UserID: userID, ProjectID: projectID, Password: password},
		HTTP:  client.Standard(), CacheDir: c.Keystone.CacheDir, CacheTTL: time.Duration(c.Keystone.CacheTTL) * time.Second,
	}
}

// broken is a collector whose configuration cannot work (a CA file that
// cannot be read): unavailable every pass, saying why.
type broken struct{ err error }

func (b broken) Collect(context.Context) ([]merger.Entry, error) {
	return nil, fmt.Errorf("%w: %v", collectors.ErrNotAvailable, b.err)
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// Run runs os-collect-config with args (without the program name).
func Run(ctx context.Context, args []string, env Env) error {
	cfg, err := config.Parse(args, config.Env{Stdout: env.Stdout, LookupEnv: env.lookup, Root: env.Root})
	if errors.Is(err, config.ErrExit) {
		return nil
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		code := exitcode.Failure
		if !errors.As(err, new(*config.Error)) {
			code = exitcode.Usage // the command line itself
		}
		return exitcode.With(code, err)
	}
	if cfg.PrintCachedir {
		fmt.Fprintln(env.Stdout, cfg.CacheDir)
		return nil
	}
	// The reference's visible output is bare messages at WARNING and
	// above; --debug, which it ignores, shows the rest here.
	level := slog.LevelWarn
	if hasArg(args, "-d", "--debug") {
		level = slog.LevelDebug
	}
	log := logging.New(env.Stderr, logging.Options{
		Identifier: "os-collect-config", Level: level, QuietAttrs: true,
		Prefix: func(time.Time, slog.Level) string { return "" },
	})
	if err := cfg.CheckCollectors(); err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if env.Sleep == nil {
		env.Sleep = sleep
	}
	r := &runner{cfg: cfg, env: env, log: log, cache: &cache.Cache{Dir: cfg.CacheDir},
		factories: factories, lastKeys: map[string][]string{},
		args: args}
	r.configHash, _ = configHash(args, env) // parsed above already
	if cfg.OneTime && cfg.OneTimeTimeout > 0 {
		return r.oneTimeWithDeadline(ctx, seconds(cfg.OneTimeTimeout))
	}
	if !cfg.OneTime && !cfg.PrintOnly && cfg.Command != "" && cfg.Splay > 0 {
		// Nodes started together should not poll in step. A fraction of
		// a second is fine (the reference's integer randrange died on it).
		d := time.Duration(rand.Float64() * cfg.Splay * float64(time.Second))
		log.Info(fmt.Sprintf("Splay: sleeping %.2f seconds first.", d.Seconds()))
		if err := env.Sleep(ctx, d); err != nil {
			return exitcode.With(exitcode.Terminated, err)
		}
	}
	return r.loop(ctx)
}

func hasArg(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n {
				return true
			}
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type runner struct {
	cfg       *config.Config
	env       Env
	log       *slog.Logger
	cache     *cache.Cache
	factories map[string]func(*config.Config, *slog.Logger) collectors.Collector
	// lastKeys are the keys each collector gave in its last good pass.
	lastKeys map[string][]string
	// instances live across passes (a collector may remember what it
	// fetched, to ask only for changes).
	instances map[string]collectors.Collector
	// configHash identifies the configuration the process started with.
	configHash string
	args       []string
	// stage says what the run is doing, for the --one-time deadline.
	stage atomic.Value
	// badConfig is the last invalid-configuration error logged.
	badConfig string
	// killGrace replaces the 10 s between SIGTERM and SIGKILL (tests).
	killGrace time.Duration
}

func (r *runner) setStage(s string) { r.stage.Store(s) }

// oneTimeWithDeadline runs the one-time pass under a deadline; on expiry
// the command (if running) is stopped and the error names the stage.
func (r *runner) oneTimeWithDeadline(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	r.setStage("starting")
	err := r.loop(ctx)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		msg := fmt.Sprintf("--one-time did not finish within %s: it was waiting for %s", d, r.stage.Load())
		r.log.Error(msg)
		return exitcode.With(exitcode.TimedOut, errors.New(msg))
	}
	return err
}

// configChanged reports a valid configuration that differs from the
// one the process started with. An invalid one is logged (once per
// distinct error) and ignored: restarting into it would stop the daemon,
// and with it the node's configuration, until someone fixes the file.
func (r *runner) configChanged() bool {
	h, err := configHash(r.args, r.env)
	if r.noteInvalid(err) {
		return false
	}
	return h != r.configHash
}

// configValid is configChanged's check alone, for SIGHUP.
func (r *runner) configValid() bool {
	_, err := configHash(r.args, r.env)
	return !r.noteInvalid(err)
}

func (r *runner) noteInvalid(err error) bool {
	if err == nil {
		r.badConfig = ""
		return false
	}
	if err.Error() != r.badConfig {
		r.log.Error(fmt.Sprintf("The configuration is invalid; still running with the one read at start: %v", err))
		r.badConfig = err.Error()
	}
	return true
}

// configHash covers which files the configuration comes from and what
// they hold, so an edited file, or one added to or removed from the
// .conf.d directory, is a change.
func configHash(args []string, env Env) (string, error) {
	cfg, err := config.Parse(args, config.Env{LookupEnv: env.lookup, Root: env.Root})
	if err == nil {
		err = cfg.CheckCollectors()
	}
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range cfg.ConfigFiles {
		fmt.Fprintf(h, "%s\x00", f)
		if data, err := os.ReadFile(f); err == nil {
			h.Write(data)
		}
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// reload re-executes the program, as the reference does on SIGHUP or when
// its configuration changed (os-apply-config rewrites it on TripleO nodes).
func (r *runner) reload(why string) error {
	r.log.Warn(why + "; restarting os-collect-config.")
	if r.env.Reexec == nil {
		return exitcode.With(exitcode.Failure, errors.New("cannot restart"))
	}
	if err := r.env.Reexec(); err != nil {
		return exitcode.With(exitcode.Failure, fmt.Errorf("restarting: %w", err))
	}
	return nil
}

// loop runs passes: once with --one-time, --force or --print, else for
// ever, sleeping from min-polling-interval doubling up to
// polling-interval, as the reference does.
func (r *runner) loop(ctx context.Context) error {
	minWait := seconds(r.cfg.MinPollingInterval)
	maxWait := seconds(r.cfg.PollingInterval)
	wait := minWait
	var wake <-chan struct{}
	daemonMode := !r.cfg.OneTime && !r.cfg.PrintOnly && r.cfg.Command != ""
	if daemonMode {
		defer r.env.Notify.Stopping()
	}
	ready := false
	if daemonMode {
		if w := watchSources(ctx, r.cfg.Collectors, r.cfg.Local.Path, r.cfg.HeatLocal.Path, r.log); w != nil {
			defer w.stop()
			wake = w.wake
		}
	}
	for {
		status, changed, err := r.pass(ctx)
		if err != nil || r.cfg.OneTime || r.cfg.PrintOnly || r.cfg.Command == "" {
			if err != nil {
				return err
			}
			if status != 0 {
				// A command killed by signal n: -n, which exits as 256-n,
				// as the reference's sys.exit of Python's returncode.
				return exitcode.With(status&0xff, fmt.Errorf("command exited %d", status))
			}
			return nil
		}
		// The daemon sleeps most of its life: hand the pass's garbage back
		// to the kernel now rather than keep it resident until the
		// scavenger gets to it (one collection per pass, well under a
		// millisecond for this heap).
		debug.FreeOSMemory()
		line := fmt.Sprintf("last pass %s: command exit %d", time.Now().Format(time.RFC3339), status)
		if !ready {
			r.env.Notify.Ready(line)
			ready = true
		} else {
			r.env.Notify.Status(line)
		}
		// Unlike the reference (after a command only), every pass checks
		// whether the configuration changed.
		if r.configChanged() {
			return r.reload("Configuration changed")
		}
		// After a change, poll soon again (the reference's help text
		// promised this; its loop never did it).
		if changed {
			wait = minWait
		}
		r.log.Info(fmt.Sprintf("Sleeping %.2f seconds.", wait.Seconds()))
		hup, serr := r.sleep(ctx, wait, wake)
		if hup && r.configValid() {
			return r.reload("SIGHUP received")
		}
		if serr != nil {
			return exitcode.With(exitcode.Terminated, serr)
		}
		wait = min(wait*2, maxWait)
	}
}

// sleep waits for d, or less if a local source changes (wake) or SIGHUP
// arrives; it reports the SIGHUP. A wake-up is not an error.
func (r *runner) sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) (hup bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop, why := make(chan struct{}), make(chan string, 1)
	go func() {
		select {
		case <-r.env.Hangup: // a nil channel never delivers
			cancel()
			why <- "hup"
		case <-wake:
			r.log.Debug("A local source changed: collecting now.")
			cancel()
			why <- "wake"
		case <-stop:
			why <- ""
		}
	}()
	// Sleep in slices no longer than the watchdog interval, pinging
	// between them from this loop.
	for left := d; ; {
		slice := left
		if w := r.env.Notify.WatchdogInterval(); w > 0 && slice > w {
			slice = w
		}
		r.env.Notify.Ping()
		if err = r.env.Sleep(sctx, slice); err != nil || slice >= left {
			break
		}
		left -= slice
	}
	close(stop)
	switch <-why {
	case "hup":
		return true, nil
	case "wake":
		return false, nil
	}
	return false, err
}

// collected is one pass's entries; kept are the names of keys reused from
// an earlier pass because their collector was unavailable; from names the
// collector of each key.
type collected struct {
	entries []merger.Entry
	kept    map[string]bool
	from    map[string]string
}

// collect runs every collector in order and returns their entries.
func (r *runner) collect(ctx context.Context) collected {
	out := collected{kept: map[string]bool{}, from: map[string]string{}}
	for _, name := range r.cfg.Collectors {
		log := r.log.With("collector", name)
		r.setStage("collector " + name)
		inst, ok := r.instances[name]
		if !ok {
			factory, known := r.factories[name]
			if !known {
				log.Warn(fmt.Sprintf("Source [%s] Unavailable.", name), "reason", "not in this build yet")
				continue
			}
			inst = factory(r.cfg, log)
			if r.instances == nil {
				r.instances = map[string]collectors.Collector{}
			}
			r.instances[name] = inst
		}
		entries, err := inst.Collect(ctx)
		switch {
		case errors.Is(err, collectors.ErrNotConfigured):
			log.Debug(fmt.Sprintf("Source [%s] Not configured.", name))
			continue
		case err != nil:
			log.Warn(fmt.Sprintf("Source [%s] Unavailable.", name), "reason", err.Error())
			// Keep what it gave last time, in its place (the reference
			// dropped it, and os-apply-config then lost its data).
			for _, k := range r.lastKeys[name] {
				out.entries = append(out.entries, merger.Entry{Name: k})
				out.kept[k] = true
			}
			continue
		}
		keys := make([]string, 0, len(entries))
		for _, e := range entries {
			keys = append(keys, e.Name)
			out.from[e.Name] = name
		}
		r.lastKeys[name] = keys
		out.entries = append(out.entries, entries...)
	}
	return out
}

// pass is one collection; it returns the command's exit status.
func (r *runner) pass(ctx context.Context) (status int, changedAny bool, err error) {
	if r.cfg.Command == "" || r.cfg.PrintOnly {
		// One object of every key (later collectors win), printed as the
		// reference's json.dumps(indent=1); the cache is not touched.
		got := r.collect(ctx)
		obj := pyjson.NewObject(len(got.entries))
		for _, e := range got.entries {
			if !got.kept[e.Name] {
				obj.Set(e.Name, e.Content)
			}
		}
		fmt.Fprintln(r.env.Stdout, pyjson.DumpsIndent(obj, 1))
		return 0, false, nil
	}
	got := r.collect(ctx)
	// The lock lives on the cache directory; a pass with nothing to store
	// and no cache yet neither needs it nor creates the directory (the
	// reference creates it only to store a key).
	if _, serr := os.Stat(r.cfg.CacheDir); serr == nil || len(got.entries) > 0 {
		r.setStage("the lock on " + r.cfg.CacheDir)
		unlock, lerr := lockDir(ctx, r.cfg.CacheDir, r.log)
		if lerr != nil {
			return 0, false, exitcode.With(exitcode.Failure, lerr)
		}
		defer unlock()
	}
	var paths, keys, changed []string
	for _, e := range got.entries {
		if got.kept[e.Name] {
			if _, err := os.Stat(r.cache.Path(e.Name)); err == nil {
				paths, keys = append(paths, r.cache.Path(e.Name)), append(keys, e.Name)
			}
			continue
		}
		committed := r.cache.Committed(e.Name)
		ch, path, err := r.cache.Store(e.Name, e.Content)
		if errors.Is(err, cache.ErrBadName) {
			r.log.Error(fmt.Sprintf("Refusing metadata key: %v", err))
			continue
		}
		if err != nil {
			return 0, false, exitcode.With(exitcode.Failure, fmt.Errorf("storing %s in the cache: %w", e.Name, err))
		}
		paths, keys = append(paths, path), append(keys, e.Name)
		if ch {
			changed = append(changed, e.Name)
			change := "new"
			if committed {
				change = "modified"
			}
			r.log.Log(ctx, logging.LevelEvent, fmt.Sprintf("Metadata key %s changed (%s).", e.Name, change),
				"collector", got.from[e.Name], "key", e.Name, "change", change)
		}
	}
	if len(changed) > 0 {
		if _, err := r.cache.StoreMetaList(keys); err != nil {
			return 0, false, exitcode.With(exitcode.Failure, fmt.Errorf("writing os_config_files.json: %w", err))
		}
		if err := r.cache.Backup(r.cfg.BackupCacheDir); err != nil {
			r.log.Warn(fmt.Sprintf("Could not copy the cache to %s: %v", r.cfg.BackupCacheDir, err))
		}
	}
	// What the command will read is on disk before it runs.
	if err := r.cache.Sync(); err != nil {
		r.log.Warn(fmt.Sprintf("Could not sync the cache: %v", err))
	}
	if len(changed) == 0 && !r.cfg.Force {
		r.log.Debug("No changes detected.")
		return 0, false, nil
	}
	r.setStage("the command " + r.cfg.Command)
	started := time.Now()
	status = r.runCommand(ctx, paths)
	took := []any{"command", r.cfg.Command, "command_exit", status,
		"command_seconds", strconv.FormatFloat(time.Since(started).Seconds(), 'f', 3, 64)}
	r.log.Log(ctx, logging.LevelEvent, fmt.Sprintf("Command exited with status %d.", status), took...)
	if status != 0 && ctx.Err() != nil {
		r.log.Warn(fmt.Sprintf("Command '%s' stopped: os-collect-config is stopping; will not cache new data.", r.cfg.Command))
		return status, len(changed) > 0, nil
	}
	if status < 0 {
		r.log.Error(fmt.Sprintf("Command failed, will not cache new data. Command '%s' %s.", r.cfg.Command, pyos.DiedWith(syscall.Signal(-status))))
		return status, len(changed) > 0, nil
	}
	if status != 0 {
		r.log.Error(fmt.Sprintf("Command failed, will not cache new data. Command '%s' returned non-zero exit status %d.", r.cfg.Command, status))
		return status, len(changed) > 0, nil
	}
	for _, k := range changed {
		if err := r.cache.Commit(k); err != nil {
			return 0, false, exitcode.With(exitcode.Failure, fmt.Errorf("committing %s: %w", k, err))
		}
	}
	if len(changed) > 0 {
		if err := r.cache.Sync(); err != nil {
			r.log.Warn(fmt.Sprintf("Could not sync the cache: %v", err))
		}
	}
	return 0, len(changed) > 0, nil
}

// lockDir takes an exclusive lock on the cache directory (created if
// needed, as the cache would), waiting while another os-collect-config
// holds it; the returned function releases it.
func lockDir(ctx context.Context, dir string, log *slog.Logger) (func(), error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("creating cache directory %s: %w", dir, err)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cache directory %s: %w", dir, err)
	}
	waited := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking cache directory %s: %w", dir, err)
		}
		if !waited {
			log.Warn(fmt.Sprintf("Waiting for another os-collect-config to finish with %s.", dir))
			waited = true
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			f.Close()
			return nil, fmt.Errorf("waiting for the lock on %s: %w", dir, err)
		}
	}
}

// runCommand runs the command through /bin/sh -c with OS_CONFIG_FILES and
// returns its exit status (Python's returncode: -n when killed by signal n).
func (r *runner) runCommand(ctx context.Context, paths []string) int {
	files := strings.Join(paths, ":")
	r.log.Info(fmt.Sprintf("Executing %s with OS_CONFIG_FILES=%s", r.cfg.Command, files))
	// The command starts with SIGHUP ignored, as under the reference
	// (which ignored it before running the command); an ignored signal
	// stays ignored in what the shell runs.
	cmd := exec.Command("/bin/sh", "-c", "trap '' HUP; "+r.cfg.Command)
	cmd.Env = append(withoutVar(r.env.Environ, "OS_CONFIG_FILES"), "OS_CONFIG_FILES="+files)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, r.env.Stdout, r.env.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.log.Error(fmt.Sprintf("Could not run %s: %v", r.cfg.Command, err))
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	var tick <-chan time.Time
	if w := r.env.Notify.WatchdogInterval(); w > 0 {
		t := time.NewTicker(w / 2)
		defer t.Stop()
		tick = t.C
	}
	cctx := ctx
	if d := seconds(r.cfg.CommandTimeout); d > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	err = r.waitCommand(cctx, cmd, done, tick)
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		r.log.Error(fmt.Sprintf("Command '%s' did not finish within %s (command-timeout); it was stopped.", r.cfg.Command, seconds(r.cfg.CommandTimeout)))
		return exitcode.TimedOut
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()) // Python's returncode
		}
		return ee.ExitCode()
	}
	return 0
}

// grace is how long a command has between SIGTERM and SIGKILL.
func (r *runner) grace() time.Duration {
	if r.killGrace > 0 {
		return r.killGrace
	}
	return 10 * time.Second
}

// waitCommand waits for the command, feeding the watchdog meanwhile; when
// ctx ends the command gets SIGTERM, then SIGKILL after a grace period.
func (r *runner) waitCommand(ctx context.Context, cmd *exec.Cmd, done <-chan error, tick <-chan time.Time) error {
	for {
		select {
		case <-tick:
			r.env.Notify.Ping()
		case err := <-done:
			return err
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case err := <-done:
				return err
			case <-time.After(r.grace()):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				return <-done
			}
		}
	}
}

func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
