// Package rebuild is heat-config-rebuild-deployed: for a node whose
// heat-config state was lost (it was on tmpfs before 2016), it marks
// every deployment in the current metadata as deployed, so that the next
// refresh does not run them all again. It reads the deployments with
// os-apply-config, as the reference does, and needs no jq.
package rebuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/proc"
)

// Env is the world the program runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes the built-in state directories; "" in production.
	Root string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()} }

// readTimeout bounds the os-apply-config run.
const readTimeout = 5 * time.Minute

// Run marks the deployments as deployed. Arguments are ignored, as by
// the reference. An error that stops it is one line on stderr.
func Run(ctx context.Context, _ []string, env Env) error {
	err := run(ctx, env)
	var e *exitcode.Error
	if errors.As(err, &e) && e.Err != nil {
		fmt.Fprintf(env.Stderr, "heat-config-rebuild-deployed: %v\n", e.Err)
	}
	return err
}

func run(ctx context.Context, env Env) error {
	fmt.Fprintln(env.Stdout, "Reading deployments via os-apply-config")
	var out, errOut bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{
		Path: "os-apply-config", Args: []string{"os-apply-config", "--key", "deployments", "--type", "raw", "--key-default", "[]"},
		Env: env.Environ, Stdout: &out, Stderr: &errOut, Timeout: readTimeout,
	})
	if err != nil {
		return exitcode.With(exitcode.Failure, fmt.Errorf("running os-apply-config: %w", err))
	}
	if res.ExitCode != 0 {
		env.Stderr.Write(errOut.Bytes())
		return exitcode.With(exitcode.Failure, fmt.Errorf("os-apply-config --key deployments failed with status %d", res.ShellStatus()))
	}
	list, err := deployment.List(out.Bytes())
	if err != nil {
		return exitcode.With(exitcode.Failure, fmt.Errorf("the deployments key: %w", err))
	}
	fmt.Fprintf(env.Stdout, "Found %d deployments.\n", len(list))
	dir := deployed.Existing(env.Environ, env.Root)
	if err := os.MkdirAll(dir.String(), 0o700); err != nil {
		return exitcode.With(exitcode.Failure, err)
	}
	// 55-heat-config's lock: its run is the directory's only writer, and
	// one that is deciding what to run must not see marks appear.
	lock, err := dir.Lock(ctx, func() {
		fmt.Fprintf(env.Stderr, "Waiting for another heat-config run to finish (%s)\n", dir)
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitcode.With(exitcode.Terminated, fmt.Errorf("stopped while waiting for the lock on %s; nothing marked", dir))
		}
		return exitcode.With(exitcode.Failure, err)
	}
	defer lock.Unlock()
	failed := false
	for i, v := range list {
		d, err := deployment.FromValue(v)
		if err != nil {
			fmt.Fprintf(env.Stderr, "Skipping deployment %d %s: %v\n", i, deployment.Label(v), err)
			failed = true
			continue
		}
		if deployment.ForApplyConfig(d.Group()) {
			fmt.Fprintf(env.Stdout, "Skipping creating deployed file for deployment %s as it is group:%s\n", d.ID(), d.Group())
			continue
		}
		fmt.Fprintf(env.Stdout, "Creating %s so that deployment will not be re-run\n", dir.State(d.ID()))
		if err := dir.Touch(d.ID()); err != nil {
			return exitcode.With(exitcode.Failure, err)
		}
	}
	if failed {
		return exitcode.With(exitcode.Failure, nil)
	}
	return nil
}
