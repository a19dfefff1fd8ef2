// Package status is tripleo-agent-status, what `cloud-init status` is for
// cloud-init: from the records the agent leaves (os-collect-config's last
// pass, heat-config's state files and signal records) it tells an
// operator what each collector, the command and each deployment last
// did, without a running daemon. `--format json` is the stable schema of
// docs/status.md; `--wait` blocks until this boot's first pass ended.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/tripleo-go/agent/heatconfig/deployed"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// Env is the world the program runs in.
type Env struct {
	Stdout, Stderr io.Writer
	Environ        []string
	// Root prefixes the default paths; "" in production.
	Root string
	Now  func() time.Time
	// Poll is the pause between looks while waiting (1 s when zero).
	Poll time.Duration
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env { return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()} }

// Exit statuses, documented in docs/exit-codes.md.
const (
	// Healthy: the last pass converged and no deployment failed.
	Healthy = exitcode.OK
	// Degraded: os-collect-config stopped on its configuration, the last
	// pass did not converge, or a deployment failed or could not be
	// signalled.
	Degraded = exitcode.Failure
	// NoPass: no pass has ended since boot, and os-collect-config did not
	// stop (with --wait: not before the timeout).
	NoPass = 3
)

// Run prints the status; the exit status says whether all is well.
func Run(ctx context.Context, args []string, env Env) error {
	cli := CLI()
	usage := func(err error) error {
		fmt.Fprintf(env.Stderr, "%s\n%s: error: %v\n", cli.usage(), cli.Prog, err)
		return exitcode.With(exitcode.Usage, err)
	}
	usageLine := func(err error) error {
		fmt.Fprintln(env.Stderr, err)
		return exitcode.With(exitcode.Usage, err)
	}
	res, err := cli.parse(args)
	switch {
	case err != nil:
		return usage(err)
	case res.help:
		cli.WriteHelp(env.Stdout)
		return nil
	case res.version:
		fmt.Fprintln(env.Stdout, cli.Version)
		return nil
	}
	format := res.format
	if !res.given["--format"] {
		format = "text"
	}
	if format != "text" && format != "json" {
		return usageLine(fmt.Errorf("tripleo-agent-status: --format: %q is not text or json", format))
	}
	timeout := time.Hour
	if s := res.timeout; s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil || secs < 0 {
			return usageLine(fmt.Errorf("tripleo-agent-status: --timeout: %q is not a number of seconds", s))
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	if res.collectLogs {
		out := res.output
		if !res.given["--output"] {
			out = DefaultBundle
		}
		if err := collectLogs(ctx, env, out); err != nil {
			fmt.Fprintf(env.Stderr, "tripleo-agent-status: %v\n", err)
			return exitcode.With(exitcode.Failure, err)
		}
		fmt.Fprintf(env.Stdout, "Wrote %s\n", out)
		return nil
	}
	if res.given["--output"] {
		return usageLine(fmt.Errorf("tripleo-agent-status: -o/--output: only with --collect-logs"))
	}
	paths := pathsOf(env)
	rep, err := gather(paths)
	if res.wait {
		rep, err = wait(ctx, env, paths, timeout, rep, err)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "tripleo-agent-status: %v\n", err)
		return exitcode.With(exitcode.Failure, err)
	}
	if format == "json" {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
	} else {
		writeText(env.Stdout, rep, now(env))
	}
	switch rep.Health {
	case "no-pass":
		return exitcode.With(NoPass, nil)
	case "healthy":
		return nil
	}
	return exitcode.With(Degraded, nil)
}

// wait looks again every Poll until a pass has ended, or os-collect-config
// stopped (on its configuration): no pass will come until someone fixes
// it.
func wait(ctx context.Context, env Env, p paths, timeout time.Duration, rep *Report, err error) (*Report, error) {
	poll := env.Poll
	if poll <= 0 {
		poll = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for err == nil && rep.Health == "no-pass" {
		select {
		case <-ctx.Done():
			return rep, nil
		case <-time.After(poll):
		}
		rep, err = gather(p)
	}
	return rep, err
}

func now(env Env) time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// paths are where the records are.
type paths struct{ statusDir, deployed string }

func pathsOf(env Env) paths {
	p := paths{statusDir: env.Root + agentstate.DefaultDir, deployed: deployed.FromEnv(env.Environ, env.Root).String()}
	if d, ok := environ.Lookup(env.Environ, agentstate.DirVar); ok && d != "" {
		p.statusDir = d
	}
	return p
}
