package occ

import (
	"context"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/proc"
)

// runCommand runs the command through /bin/sh -c with OS_CONFIG_FILES and
// returns its exit status (Python's returncode: -n when killed by signal
// n). Past command-timeout it is stopped (SIGTERM, then SIGKILL) and the
// status is 124; the watchdog is fed while it runs.
func (r *runner) runCommand(ctx context.Context, paths []string) int {
	files := strings.Join(paths, ":")
	r.log.Info(fmt.Sprintf("Executing %s with OS_CONFIG_FILES=%s", r.cfg.Command, files))
	if r.env.RunCommand != nil {
		return r.env.RunCommand(ctx, paths)
	}
	// The command starts with SIGHUP ignored, as under the reference
	// (which ignored it before running the command); an ignored signal
	// stays ignored in what the shell runs.
	spec := proc.Spec{
		Path: "/bin/sh", Args: []string{"/bin/sh", "-c", "trap '' HUP; " + r.cfg.Command},
		Env:    environ.With(r.env.Environ, "OS_CONFIG_FILES", files),
		Stdout: r.env.Stdout, Stderr: r.env.Stderr,
		Timeout: collectors.Seconds(r.cfg.CommandTimeout), Grace: r.killGrace,
	}
	if w := r.env.Notify.WatchdogInterval(); w > 0 {
		spec.Tick, spec.OnTick = w/2, r.env.Notify.Ping
	}
	res, err := proc.Run(ctx, spec)
	if err != nil {
		if ctx.Err() == nil { // else: stopping, and the pass says so
			r.log.Error(fmt.Sprintf("Could not run %s: %v", r.cfg.Command, err))
		}
		return 127
	}
	if res.TimedOut {
		r.log.Error(fmt.Sprintf("Command '%s' did not finish within %s (command-timeout); it was stopped.", r.cfg.Command, spec.Timeout))
		return exitcode.TimedOut
	}
	return res.Returncode()
}
