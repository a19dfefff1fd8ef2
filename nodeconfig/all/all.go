// Package all is the registry of the node's own configure steps: the one
// list the multi-call binary's programs are made from, in the order of
// the Makefile's NODE_ELEMENTS (a test compares).
package all

import (
	"context"

	"github.com/tripleo-go/agent/nodeconfig"
	"github.com/tripleo-go/agent/nodeconfig/gateway"
	"github.com/tripleo-go/agent/nodeconfig/hiera"
	"github.com/tripleo-go/agent/nodeconfig/hosts"
	"github.com/tripleo-go/agent/nodeconfig/netconfig"
	"github.com/tripleo-go/agent/nodeconfig/sysctl"
)

// Steps is every step, one line each, grouped by element.
var Steps = []nodeconfig.Step{
	{Name: sysctl.ApplyName, Element: "sysctl", Run: inProcess(sysctl.RunApply), CLI: sysctl.ApplyCLI},
	{Name: "sysctl-set-value", Element: "sysctl", Run: inProcess(sysctl.RunSet), CLI: sysctl.SetCLI, Bin: true},
	{Name: "sysctl-write-value", Element: "sysctl", Run: inProcess(sysctl.RunWrite), CLI: sysctl.WriteCLI, Bin: true},
	{Name: "sysctl-append-value", Element: "sysctl", Run: inProcess(sysctl.RunAppend), CLI: sysctl.AppendCLI, Bin: true},
	{Name: netconfig.Name, Element: "os-net-config", Run: func(ctx context.Context, args []string) error {
		return netconfig.Run(ctx, args, netconfig.ProcessEnv())
	}, CLI: netconfig.CLI},
	{Name: gateway.Name, Element: "network-gateway", Run: inProcess(gateway.Run), CLI: gateway.CLI},
	{Name: hiera.Name, Element: "hiera", Run: func(ctx context.Context, args []string) error {
		return hiera.Run(ctx, args, hiera.ProcessEnv())
	}, CLI: hiera.CLI},
	{Name: hiera.DisableName, Element: "hiera", Run: func(ctx context.Context, args []string) error {
		return hiera.Disable(ctx, args, hiera.ProcessEnv())
	}, CLI: hiera.DisableCLI},
	{Name: hosts.Name, Element: "hosts", Run: inProcess(hosts.Run), CLI: hosts.CLI},
}

// inProcess runs a step that takes nodeconfig's Env in the process's.
func inProcess(run func(context.Context, []string, nodeconfig.Env) error) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error { return run(ctx, args, nodeconfig.ProcessEnv()) }
}
