// Package heatconfig is 55-heat-config, the os-refresh-config script that
// runs a node's Heat software deployments: for each deployment in the
// list that os-apply-config rendered from the metadata, in list order and
// one at a time, unless its state file says it ran already, it saves the
// deployment, hands it to the hook of its group, and gives the hook's
// result to heat-config-notify, which signals Heat.
package heatconfig

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/signal"
)

// Env is the world the program runs in.
type Env struct {
	Stderr  io.Writer
	Environ []string
	// Root prefixes the built-in paths; "" in production.
	Root string
	Now  func() time.Time
	// Grace is the time between SIGTERM and SIGKILL for a hook past its
	// deadline; 0 means proc's default.
	Grace time.Duration
	// Journal stands in for journald in tests (see logging.Options).
	Journal func(msg string, pri journal.Priority, vars map[string]string) error
	// TokenCache is heat-config-notify's Keystone token cache when the
	// environment names none (signal.TokenCacheVar): where a
	// deployment's token is fetched while its hook runs; "" fetches none.
	TokenCache string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stderr: os.Stderr, Environ: os.Environ(), TokenCache: signal.DefaultTokenCache}
}

// config is where the program reads and writes, from the environment.
type config struct {
	shellConfig           string
	deployed, deployedOld deployed.Dir
	hookDirs              []string
	notify                string
	hookTimeout           time.Duration
	// tokenCache is heat-config-notify's token cache ("" for none).
	tokenCache string
}

func newConfig(env Env) (config, error) {
	get := func(name, def string) string {
		if v, ok := environ.Lookup(env.Environ, name); ok {
			return v
		}
		return env.Root + def
	}
	c := config{
		shellConfig: get(deployment.ListVar, deployment.DefaultListFile),
		deployed:    deployed.FromEnv(env.Environ, env.Root),
		deployedOld: deployed.LegacyFromEnv(env.Environ, env.Root),
		notify:      get("HEAT_CONFIG_NOTIFY", "heat-config-notify"),
		tokenCache:  signal.TokenCacheDir(notifyEnviron(env), env.TokenCache),
	}
	if c.notify == env.Root+"heat-config-notify" {
		c.notify = "heat-config-notify" // a PATH lookup, not under Root
	}
	if h, ok := environ.Lookup(env.Environ, "HEAT_CONFIG_HOOKS"); ok && h != "" {
		c.hookDirs = append(c.hookDirs, h)
	}
	c.hookDirs = append(c.hookDirs, env.Root+"/usr/libexec/heat-config/hooks", env.Root+"/var/lib/heat-config/hooks")
	var err error
	c.hookTimeout, err = deadline.Hook(env.Environ)
	return c, err
}

// notifyEnviron is the environment heat-config-notify runs in.
func notifyEnviron(env Env) []string {
	if env.Environ == nil {
		return os.Environ()
	}
	return env.Environ
}

// Run runs every deployment not yet deployed. It fails only when the
// deployments file is missing or the state directory cannot be made; a
// failed hook or signal is logged and the next deployment runs, as in
// the reference (its deployment is not retried: its state file exists).
func Run(ctx context.Context, args []string, env Env) error {
	log := logging.New(env.Stderr, logging.Options{
		Identifier: "heat-config", Level: slog.LevelDebug, Now: env.Now,
		Prefix: logging.PythonPrefix("heat-config"), QuietAttrs: true, Journal: env.Journal,
	})
	c, err := newConfig(env)
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, nil)
	}
	fi, err := os.Lstat(c.shellConfig)
	if err != nil {
		log.Error("No config file " + c.shellConfig)
		return exitcode.With(exitcode.Failure, nil)
	}
	if fi.Mode().Perm() != 0o600 {
		// It holds the signal credentials of every deployment.
		if err := os.Chmod(c.shellConfig, 0o600); err != nil {
			log.Warn(fmt.Sprintf("Could not make %s private: %v", c.shellConfig, err))
		}
	}
	if err := c.deployed.Prepare(c.deployedOld, log); err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, nil)
	}
	// One run at a time: a second one (an operator's beside the
	// daemon's) waits, so its sweep cannot remove what this one stages.
	lock, err := c.deployed.Lock(ctx, func() { log.Info("Waiting for another heat-config run to finish (" + c.deployed.String() + ")") })
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.With(exitcode.Terminated, ctx.Err())
		}
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, nil)
	}
	defer lock.Unlock()
	for _, path := range c.deployed.Sweep() {
		log.Info("Removed " + path + ", left by a run that did not finish")
	}
	data, err := os.ReadFile(c.shellConfig)
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, nil)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		// What heat-config's template renders when the metadata has no
		// deployments key (a node configured by hand): nothing to run,
		// and nothing wrong. The reference is silent here too.
		return nil
	}
	list, err := deployment.ListOwned(data) // data is the list's now
	if err != nil {
		// The reference ignores a file that is not JSON silently; say why
		// nothing runs, but keep its exit status (os-collect-config would
		// otherwise run the whole refresh again on every poll).
		log.Error(fmt.Sprintf("%s: %v", c.shellConfig, err))
		return nil
	}
	r := runner{config: c, env: env, log: log}
	for i, v := range list {
		if ctx.Err() != nil {
			return exitcode.With(exitcode.Terminated, ctx.Err())
		}
		r.invoke(ctx, i, v)
	}
	if ctx.Err() != nil {
		return exitcode.With(exitcode.Terminated, ctx.Err())
	}
	return nil
}
