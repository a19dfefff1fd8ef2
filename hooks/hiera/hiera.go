// Package hiera is the hook of group "hiera": the config (a
// StructuredConfig) holds the hiera hierarchy and data files, which it
// writes for later puppet runs.
package hiera

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/pyutf8"
)

// Hook is the hiera hook.
var Hook = hooks.Hook{Group: "hiera", Summary: "writes the config as Hiera data", IDOptional: true, Run: Run}

// Settings, with their defaults.
const (
	DataDirVar      = "HEAT_PUPPET_HIERA_DATADIR"
	ConfigVar       = "HEAT_HIERA_CONFIG"
	CheckCmdVar     = "HEAT_HIERA_ELEMENT_CHECK_CMD"
	DefaultDataDir  = "/etc/puppet/hieradata"
	DefaultConfig   = "/etc/puppet/hiera.yaml"
	DefaultCheckCmd = "os-apply-config --key hiera.datafiles --type raw --key-default empty"
)

// Run refuses to go on when os-apply-config still has the legacy hiera
// element's data, then writes the hiera configuration (when the config
// has a hierarchy) and the data files (datafiles: name -> data).
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	var c *jsondoc.Object
	switch x := d.Config().(type) {
	case nil:
		c = jsondoc.NewObject(0)
	case *jsondoc.Object:
		c = x
	default:
		return nil, fmt.Errorf("%w: the hiera hook's config is %s, not an object", hooks.ErrConfig, jsondoc.Dumps(x))
	}
	if res := legacyCheck(ctx, env); res != nil {
		return res, nil
	}
	dataDir := env.Setting(DataDirVar, DefaultDataDir)
	if err := hooks.PrepareDir(dataDir); err != nil {
		return nil, err
	}
	if h, ok := c.Get("hierarchy"); ok {
		list, ok := h.([]jsondoc.Value)
		if !ok {
			return nil, fmt.Errorf("%w: hierarchy is %s, not a list", hooks.ErrConfig, jsondoc.Dumps(h))
		}
		if err := hooks.WriteFile(env.Setting(ConfigVar, DefaultConfig), []byte(Config(dataDir, list)), 0o600); err != nil {
			return nil, err
		}
	}
	if df, ok := c.Get("datafiles"); ok {
		files, ok := df.(*jsondoc.Object)
		if !ok {
			return nil, fmt.Errorf("%w: datafiles is %s, not an object", hooks.ErrConfig, jsondoc.Dumps(df))
		}
		for i := 0; i < files.Len(); i++ {
			name, data := files.At(i)
			path := pypath.Join(dataDir, name+".json")
			if err := hooks.WriteFile(path, []byte(jsondoc.DumpsIndentSorted(data, 4)), 0o600); err != nil {
				return nil, err
			}
		}
	}
	return hooks.Status(nil, "", "", 0), nil
}

// Config is the hiera configuration file for a JSON backend in dataDir
// with the hierarchy's levels, byte for byte the reference's (it starts
// with an empty line).
func Config(dataDir string, hierarchy []jsondoc.Value) string {
	var b strings.Builder
	b.WriteString("\n---\n:backends:\n  - json\n:json:\n  :datadir: " + dataDir + "\n:hierarchy:\n")
	for _, item := range hierarchy {
		b.WriteString("  - " + jsondoc.PyStr(item) + "\n")
	}
	return b.String()
}

// legacyCheck runs the check command (split on single spaces, as the
// reference did); unless it prints "empty", os-apply-config still holds
// the old element's hiera data and the deployment fails with a result
// saying so. A command that cannot be run means no legacy data.
func legacyCheck(ctx context.Context, env hooks.Env) *jsondoc.Object {
	argv := strings.Split(env.Setting(CheckCmdVar, DefaultCheckCmd), " ")
	out := env.RunTool(ctx, hooks.Tool{Argv: argv})
	switch {
	case out.TimedOut || out.Terminated:
		return hooks.Status(nil, out.Stdout, out.Stderr, out.Status)
	case !out.Ran:
		return nil
	}
	found := pyutf8.DecodeReplace(bytes.TrimRight(out.RawStdout, " \t\n\r\v\f"))
	if found == "empty" {
		return nil
	}
	msg := "Legacy hieradata from os-apply-config has been detected - " + found +
		". Please update all of your interfaces to use the new heat-agents hiera hook before proceeding"
	return hooks.Status(nil, out.Stdout, msg, 1)
}
