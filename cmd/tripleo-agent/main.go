// Command tripleo-agent is one binary for all the agent's programs; it runs
// the one named by the link it was started through (os-apply-config, ...),
// or by its first argument.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/heatconfig"
	"github.com/tripleo-go/agent/heatconfig/rebuild"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/hooks/all"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/nodeconfig"
	"github.com/tripleo-go/agent/nodeconfig/gateway"
	"github.com/tripleo-go/agent/nodeconfig/hiera"
	"github.com/tripleo-go/agent/nodeconfig/hosts"
	"github.com/tripleo-go/agent/nodeconfig/netconfig"
	"github.com/tripleo-go/agent/nodeconfig/sysctl"
	"github.com/tripleo-go/agent/refresh"
	"github.com/tripleo-go/agent/refresh/runparts"
	"github.com/tripleo-go/agent/signal/notify"
	"github.com/tripleo-go/agent/signal/refreshcompleted"
	"github.com/tripleo-go/agent/status"
)

// programs maps a program name to its entry point.
var programs = map[string]func(ctx context.Context, args []string) error{
	"os-apply-config": runApplyConfig,
	"os-collect-config": func(ctx context.Context, args []string) error {
		unmapStartupCode() // the daemon lives on every node: 12.3 -> 10.7 MiB idle
		return occ.Run(ctx, args, occ.ProcessEnv())
	},
	"os-refresh-config": func(ctx context.Context, args []string) error {
		return refresh.Run(ctx, args, refresh.ProcessEnv())
	},
	"dib-run-parts": func(ctx context.Context, args []string) error {
		return runparts.RunCLI(ctx, args, runparts.ProcessEnv())
	},
	// The reference's legacy name for os-apply-config.
	"os-config-applier": runApplyConfig,
	// os-refresh-config's scripts of the heat-config element.
	"20-os-apply-config": runApplyConfig,
	"55-heat-config": func(ctx context.Context, args []string) error {
		return heatconfig.Run(ctx, args, heatconfig.ProcessEnv())
	},
	"heat-config-rebuild-deployed": func(ctx context.Context, args []string) error {
		return rebuild.Run(ctx, args, rebuild.ProcessEnv())
	},
	"heat-config-notify": func(ctx context.Context, args []string) error {
		return notify.Run(ctx, args, notify.ProcessEnv())
	},
	"99-refresh-completed": func(ctx context.Context, args []string) error {
		return refreshcompleted.Run(ctx, args, refreshcompleted.ProcessEnv())
	},
	"tripleo-agent-status": func(ctx context.Context, args []string) error {
		return status.Run(ctx, args, status.ProcessEnv())
	},
	// The node's own configure steps (elements sysctl, network-gateway,
	// hosts) and the sysctl element's helpers.
	sysctl.ApplyName:      nodeStep(sysctl.RunApply),
	"sysctl-set-value":    nodeStep(sysctl.RunSet),
	"sysctl-write-value":  nodeStep(sysctl.RunWrite),
	"sysctl-append-value": nodeStep(sysctl.RunAppend),
	gateway.Name:          nodeStep(gateway.Run),
	hosts.Name:            nodeStep(hosts.Run),
	// os-refresh-config's scripts of the os-net-config and hiera elements.
	netconfig.Name: func(ctx context.Context, args []string) error {
		return netconfig.Run(ctx, args, netconfig.ProcessEnv())
	},
	hiera.Name: func(ctx context.Context, args []string) error {
		return hiera.Run(ctx, args, hiera.ProcessEnv())
	},
	hiera.DisableName: func(ctx context.Context, args []string) error {
		return hiera.Disable(ctx, args, hiera.ProcessEnv())
	},
}

func nodeStep(run func(context.Context, []string, nodeconfig.Env) error) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error { return run(ctx, args, nodeconfig.ProcessEnv()) }
}

// manuals are the programs' command lines: what --help prints and what
// the manual pages (tripleo-agent --man PROGRAM) are made of.
var manuals = map[string]func() *argparse.Parser{
	"os-apply-config":              applyconfig.CLI,
	"os-config-applier":            applyconfig.CLI,
	"20-os-apply-config":           applyconfig.CLI,
	"os-collect-config":            occ.CLI,
	"os-refresh-config":            refresh.CLI,
	"dib-run-parts":                runparts.CLI,
	"55-heat-config":               heatconfig.CLI,
	"heat-config-rebuild-deployed": rebuild.CLI,
	"heat-config-notify":           notify.CLI,
	"99-refresh-completed":         refreshcompleted.CLI,
	"tripleo-agent-status":         statusCLI,
	sysctl.ApplyName:               sysctl.ApplyCLI,
	"sysctl-set-value":             sysctl.SetCLI,
	"sysctl-write-value":           sysctl.WriteCLI,
	"sysctl-append-value":          sysctl.AppendCLI,
	gateway.Name:                   gateway.CLI,
	hosts.Name:                     hosts.CLI,
	netconfig.Name:                 netconfig.CLI,
	hiera.Name:                     hiera.CLI,
	hiera.DisableName:              hiera.DisableCLI,
}

// parsesOwnHelp are the programs whose argparse parser answers --help and
// --version itself (with the reference's rules: abbreviations, usage
// errors); main answers for the others before they run.
var parsesOwnHelp = map[string]bool{
	"os-apply-config": true, "os-config-applier": true, "20-os-apply-config": true,
	"os-collect-config": true, "os-refresh-config": true, "tripleo-agent-status": true,
}

// The hooks answer to their deployment group's name (the links make
// install puts in /usr/libexec/heat-config/hooks), their elements'
// os-refresh-config scripts to the scripts' names.
func init() {
	for _, h := range all.Hooks {
		programs[h.Group] = func(ctx context.Context, args []string) error {
			return hooks.Main(ctx, h, args, hooks.ProcessEnv())
		}
		manuals[h.Group] = func() *argparse.Parser { return hooks.CLI(h) }
		for _, s := range h.Scripts {
			programs[s.Name] = func(ctx context.Context, args []string) error {
				return hooks.RunScript(ctx, s, args, hooks.ProcessEnv())
			}
			manuals[s.Name] = func() *argparse.Parser { return hooks.ScriptCLI(s) }
		}
	}
}

// runApplyConfig runs os-apply-config with a soft memory limit: its live
// data is small next to the garbage of parsing metadata and templates, and
// the heap would otherwise grow past the 20 MiB peak RSS budget (make
// bench: 19.5-21.6 MiB with GOGC=50, 17.6-18.7 MiB with the limit, in the
// same time). The limit is soft: bigger metadata only makes the collector
// work harder (its CPU is capped by the runtime). GOGC or GOMEMLIMIT in
// the environment win.
func runApplyConfig(ctx context.Context, args []string) error {
	limitApplyConfigMemory(os.Getenv)
	unmapStartupCode()
	return applyconfig.Run(ctx, args, applyconfig.ProcessEnv())
}

func limitApplyConfigMemory(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(applyConfigMemoryLimit)
	}
}

// applyConfigMemoryLimit is Go-managed memory only; the binary's mapped
// pages come on top in RSS: about 9 MiB after the package inits, 6.5 MiB
// at the end of a run once unmapStartupCode has let go of them. In the
// oacbench corpus: 15 MiB made 15-17 collections a run, 16 MiB makes 9
// at a peak RSS of 18.2-18.8 MiB (17 MiB: 7-8, but up to 19.9 MiB on a
// loaded machine, too close to the 20 MiB budget).
const applyConfigMemoryLimit = 16 << 20

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var got atomic.Value
	go func() {
		got.Store(<-sigs)
		cancel()
	}()
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	run, ok := programs[name]
	if !ok && len(args) > 0 {
		name, args = args[0], args[1:]
		run, ok = programs[name]
	}
	if !ok {
		os.Exit(agentMain(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
	}
	if answered(name, args, os.Stdout, os.Stderr) {
		os.Exit(exitcode.OK)
	}
	code := exitcode.Of(run(ctx, args))
	if sig, ok := got.Load().(syscall.Signal); ok && code == exitcode.Terminated {
		// Stopped by a signal after cleaning up: die of it, as the Python
		// programs did, so systemd counts `systemctl stop` as a clean
		// stop (an exit status of 143 is a failure to it) and shells
		// still see 128+n.
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal is delivered meanwhile
	}
	os.Exit(code)
}
