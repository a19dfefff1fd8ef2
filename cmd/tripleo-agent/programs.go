package main

import (
	"context"
	"slices"

	"github.com/tripleo-go/agent/applyconfig"
	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/heatconfig"
	"github.com/tripleo-go/agent/heatconfig/rebuild"
	"github.com/tripleo-go/agent/hooks"
	hookall "github.com/tripleo-go/agent/hooks/all"
	"github.com/tripleo-go/agent/internal/argparse"
	nodeall "github.com/tripleo-go/agent/nodeconfig/all"
	"github.com/tripleo-go/agent/refresh"
	"github.com/tripleo-go/agent/refresh/runparts"
	"github.com/tripleo-go/agent/signal/notify"
	"github.com/tripleo-go/agent/signal/refreshcompleted"
	"github.com/tripleo-go/agent/status"
)

// program is one name the binary answers to.
type program struct {
	name string
	run  func(ctx context.Context, args []string) error
	// cli is its command line: what --help prints, and what its manual
	// page (tripleo-agent --man PROGRAM) and completion are made of.
	cli func() *argparse.Parser
	// ownHelp: its argparse parser answers --help and --version itself
	// (with the reference's rules: abbreviations, usage errors); main
	// answers for the others before they run.
	ownHelp bool
	// bin: make install links it in bin (the Makefile's PROGRAMS, in this
	// order; a test compares): it gets a completion and a manual page.
	bin bool
}

// programs is the one table of the binary's programs; everything else
// (the names --help lists, the manual pages, the completion, the names in
// bin) is read from it.
var programs = programTable()

func programTable() []program {
	table := []program{
		{name: "os-apply-config", run: runApplyConfig, cli: applyconfig.CLI, ownHelp: true, bin: true},
		// The reference's legacy name for os-apply-config.
		{name: "os-config-applier", run: runApplyConfig, cli: applyconfig.CLI, ownHelp: true, bin: true},
		{name: "os-refresh-config", run: func(ctx context.Context, args []string) error {
			return refresh.Run(ctx, args, refresh.ProcessEnv())
		}, cli: refresh.CLI, ownHelp: true, bin: true},
		{name: "dib-run-parts", run: func(ctx context.Context, args []string) error {
			return runparts.RunCLI(ctx, args, runparts.ProcessEnv())
		}, cli: runparts.CLI, bin: true},
		{name: "os-collect-config", run: func(ctx context.Context, args []string) error {
			env := occ.ProcessEnv()
			// The daemon lives on every node: 12.3 -> 10.7 MiB idle. Not
			// at the start, which a --one-time run paid for (33.5 -> 30.1
			// ms over occbench's 20 keys) with the faults that map again
			// the code it runs next.
			env.Settle = unmapStartupCode
			return occ.Run(ctx, args, env)
		}, cli: occ.CLI, ownHelp: true, bin: true},
		{name: "heat-config-notify", run: func(ctx context.Context, args []string) error {
			return notify.Run(ctx, args, notify.ProcessEnv())
		}, cli: notify.CLI, bin: true},
		{name: "heat-config-rebuild-deployed", run: func(ctx context.Context, args []string) error {
			return rebuild.Run(ctx, args, rebuild.ProcessEnv())
		}, cli: rebuild.CLI, bin: true},
		{name: "tripleo-agent-status", run: func(ctx context.Context, args []string) error {
			return status.Run(ctx, args, status.ProcessEnv())
		}, cli: statusCLI, ownHelp: true, bin: true},
		// os-refresh-config's scripts of the heat-config element.
		{name: "20-os-apply-config", run: runApplyConfig, cli: applyconfig.CLI, ownHelp: true},
		{name: "55-heat-config", run: func(ctx context.Context, args []string) error {
			return heatconfig.Run(ctx, args, heatconfig.ProcessEnv())
		}, cli: heatconfig.CLI},
		{name: "99-refresh-completed", run: func(ctx context.Context, args []string) error {
			return refreshcompleted.Run(ctx, args, refreshcompleted.ProcessEnv())
		}, cli: refreshcompleted.CLI},
	}
	// The node's own configure steps (elements sysctl, os-net-config,
	// network-gateway, hiera, hosts) and the sysctl element's helpers.
	for _, s := range nodeall.Steps {
		table = append(table, program{name: s.Name, run: s.Run, cli: s.CLI, bin: s.Bin})
	}
	// The hooks answer to their deployment group's name (the links make
	// install puts in /usr/libexec/heat-config/hooks), their elements'
	// os-refresh-config scripts to the scripts' names.
	for _, h := range hookall.Hooks {
		table = append(table, program{name: h.Group, run: func(ctx context.Context, args []string) error {
			return hooks.Main(ctx, h, args, hooks.ProcessEnv())
		}, cli: func() *argparse.Parser { return hooks.CLI(h) }})
		for _, s := range h.Scripts {
			table = append(table, program{name: s.Name, run: func(ctx context.Context, args []string) error {
				return hooks.RunScript(ctx, s, args, hooks.ProcessEnv())
			}, cli: func() *argparse.Parser { return hooks.ScriptCLI(s) }})
		}
	}
	return table
}

// lookup is the program of that name.
func lookup(name string) (program, bool) {
	i := slices.IndexFunc(programs, func(p program) bool { return p.name == name })
	if i < 0 {
		return program{}, false
	}
	return programs[i], true
}

// programNames are the programs, sorted.
func programNames() []string {
	var names []string
	for _, p := range programs {
		names = append(names, p.name)
	}
	slices.Sort(names)
	return names
}

// binPrograms are the names make install puts in bin: tripleo-agent and
// the programs so marked, in the table's order (the Makefile's PROGRAMS).
func binPrograms() []string {
	names := []string{"tripleo-agent"}
	for _, p := range programs {
		if p.bin {
			names = append(names, p.name)
		}
	}
	return names
}
