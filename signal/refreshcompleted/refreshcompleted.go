// Package refreshcompleted is os-refresh-config's
// post-configure.d/99-refresh-completed: once every configure script has
// succeeded, it signals Heat for the deployments that no hook runs,
// those of group os-apply-config (os-collect-config merged their config
// into os-apply-config's data, which the configure phase has just
// applied), and for the legacy completion handles of old templates.
//
// It signals through the same code as heat-config-notify, so every
// signal transport works; the reference only POSTed, so it could signal
// CFN_SIGNAL deployments and nothing else.
package refreshcompleted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/all"
	"github.com/tripleo-go/agent/signal/presigned"
)

// Env is the world the program runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes the marker directory; "" in production.
	Root string
	// Signal overrides the signal options (tests: shorter budgets).
	Signal *signal.Options
	// TokenCache is the Keystone token cache when the environment
	// names none (signal.TokenCacheVar); "" keeps none.
	TokenCache string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), TokenCache: signal.DefaultTokenCache}
}

// markerDir holds one empty file per signalled deployment id;
// OS_APPLY_CONFIG_DEPLOYED overrides it (a tree installed under DESTDIR
// is tested in place with it).
const markerDir = "/var/lib/os-apply-config-deployments/deployed"

// readTimeout bounds each os-apply-config --key run.
const readTimeout = 2 * time.Minute

// Run signals what has not been signalled. A failed signal fails the
// run, so os-collect-config keeps the metadata uncommitted and runs the
// refresh again on its next pass; a signalled deployment is marked and
// not signalled again.
func Run(ctx context.Context, _ []string, env Env) error {
	log := logging.New(env.Stderr, logging.Options{
		Identifier: Name, Level: slog.LevelDebug,
		Prefix: logging.PythonPrefix(Name),
	})
	opts := signal.Options{Log: log, Transports: all.Transports}
	if env.Signal != nil {
		opts = *env.Signal
		opts.Log = log
	}
	if opts.TokenCache == "" {
		opts.TokenCache = signal.TokenCacheDir(env.Environ, env.TokenCache)
	}
	r := run{env: env, log: log, opts: opts}
	legacyErr := r.legacy(ctx)
	var deployErr error
	if ctx.Err() == nil {
		deployErr = r.deployments(ctx)
	}
	err := errors.Join(legacyErr, deployErr)
	if ctx.Err() != nil {
		if !r.stopped { // stopped outside a signal: reading the keys
			r.log.Warn(Name + " stopped before the signal was sent")
		}
		return exitcode.With(exitcode.Terminated, errors.Join(err, ctx.Err()))
	}
	if err != nil {
		return exitcode.With(exitcode.Failure, err)
	}
	return nil
}

// Name is the program's name, in its log lines.
const Name = "99-refresh-completed"

type run struct {
	env  Env
	log  *slog.Logger
	opts signal.Options
	// stopped: a stop cut a signal short, and was logged.
	stopped bool
}

// failed logs a signal's failure, or where a stop left it.
func (r *run) failed(err error, attrs ...any) {
	if signal.LogFailures(r.log, Name, err, attrs...) {
		r.stopped = true
	}
}

// key reads one key of os-apply-config's data, "" when missing.
func (r *run) key(ctx context.Context, name string) (string, error) {
	var out, errOut bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{
		Path: "os-apply-config", Args: []string{"os-apply-config", "--key", name, "--type", "raw", "--key-default", ""},
		Env: r.env.Environ, Stdout: &out, Stderr: &errOut, Timeout: readTimeout,
	})
	if err != nil {
		return "", fmt.Errorf("running os-apply-config: %w", err)
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("os-apply-config --key %s: status %d: %s", name, res.ShellStatus(), strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// legacy signals the completion handle (PUT) and completion signal
// (POST) that old templates put in their StructuredConfig, when the node
// knows its instance-id, with the reference's body.
func (r *run) legacy(ctx context.Context) error {
	id, err := r.key(ctx, "instance-id")
	if err != nil || id == "" {
		return err
	}
	body := jsondoc.NewObject(4)
	body.Set("Status", "SUCCESS")
	body.Set("Reason", "Configuration Complete")
	body.Set("UniqueId", id)
	body.Set("Data", "Finished os-refresh-config.")
	var errs []error
	for _, h := range []struct{ key, method string }{{"completion-handle", "PUT"}, {"completion-signal", "POST"}} {
		url, err := r.key(ctx, h.key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if url == "" {
			continue
		}
		fmt.Fprintf(r.env.Stdout, "Signalling %s %s\n", h.key, secret.RedactURL(url))
		if err := signal.SendTo(ctx, presigned.New(h.method, url), body, r.opts); err != nil {
			r.failed(err, "handle", h.key)
			errs = append(errs, fmt.Errorf("%s: %w", h.key, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// deployments signals each os-apply-config deployment that has a signal
// transport and no marker yet.
func (r *run) deployments(ctx context.Context) error {
	raw, err := r.key(ctx, "deployments")
	if err != nil || raw == "" {
		return err
	}
	list, err := deployment.List([]byte(raw))
	if err != nil {
		return fmt.Errorf("the deployments key: %w", err)
	}
	dir := r.env.Root + markerDir
	if d, ok := environ.Lookup(r.env.Environ, "OS_APPLY_CONFIG_DEPLOYED"); ok && d != "" {
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for i, v := range list {
		d, err := deployment.FromValue(v)
		if err != nil {
			if obj, _ := v.(*jsondoc.Object); obj != nil {
				if g, _ := obj.Get("group"); g != deployment.ApplyConfig {
					continue // not ours to judge
				}
			}
			// Retrying cannot mend it: say so, and do not hold the
			// refresh back for it.
			r.log.Error(fmt.Sprintf("Skipping deployment %d %s: %v", i, deployment.Label(v), err))
			continue
		}
		if d.Group() != deployment.ApplyConfig || !r.opts.Transports.Claim(d) {
			continue
		}
		marker := filepath.Join(dir, d.ID())
		if _, err := os.Lstat(marker); err == nil {
			fmt.Fprintf(r.env.Stdout, "Skipping %s, already deployed\n", d.ID())
			continue
		}
		fmt.Fprintf(r.env.Stdout, "Signalling os-apply-config deployment %s %s\n", d.ID(), describe(d))
		data := jsondoc.NewObject(2)
		data.Set("deploy_stdout", "os-apply-config deployment "+d.ID()+" completed")
		data.Set("deploy_status_code", "0")
		if _, err := signal.Send(ctx, d, data, r.opts); err != nil {
			r.failed(err, "deployment", d.ID())
			errs = append(errs, fmt.Errorf("deployment %s: %w", d.ID(), err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if err := touch(marker); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// describe says where the signal goes, without credentials.
func describe(d *deployment.Deployment) string {
	if url, ok := d.InputString("deploy_signal_id"); ok {
		return secret.RedactURL(url)
	}
	t, _ := d.InputString("deploy_signal_transport")
	return "via " + t
}

// touch marks a deployment signalled (an empty file, as touch(1) made).
func touch(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
