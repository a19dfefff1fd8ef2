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
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployment"
	"github.com/tripleo-go/agent/internal/environ"
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

// skipped groups are never run by heat-config's hooks.
var skipped = map[string]bool{"os-apply-config": true, deployment.Ungrouped: true}

// Run marks the deployments as deployed. Arguments are ignored, as by
// the reference.
func Run(ctx context.Context, _ []string, env Env) error {
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
	dir := deployedDir(env)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return exitcode.With(exitcode.Failure, err)
	}
	failed := false
	for i, v := range list {
		d, err := deployment.FromValue(v)
		if err != nil {
			fmt.Fprintf(env.Stderr, "Skipping deployment %d %s: %v\n", i, deployment.Label(v), err)
			failed = true
			continue
		}
		if skipped[d.Group()] {
			fmt.Fprintf(env.Stdout, "Skipping creating deployed file for deployment %s as it is group:%s\n", d.ID(), d.Group())
			continue
		}
		path := filepath.Join(dir, d.ID()+".json")
		fmt.Fprintf(env.Stdout, "Creating %s so that deployment will not be re-run\n", path)
		if err := touch(path); err != nil {
			return exitcode.With(exitcode.Failure, err)
		}
	}
	if failed {
		return exitcode.With(exitcode.Failure, nil)
	}
	return nil
}

// deployedDir is heat-config's state directory: HEAT_CONFIG_DEPLOYED,
// else the current one if it exists, else the legacy one (heat-config
// migrates it on its next run).
func deployedDir(env Env) string {
	if d, ok := environ.Lookup(env.Environ, "HEAT_CONFIG_DEPLOYED"); ok && d != "" {
		return d
	}
	current := env.Root + "/var/lib/heat-config/deployed"
	if _, err := os.Stat(current); err == nil {
		return current
	}
	return env.Root + "/var/run/heat-config/deployed"
}

// touch creates path empty, leaving an existing file alone (heat-config
// only looks at its existence).
func touch(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}
