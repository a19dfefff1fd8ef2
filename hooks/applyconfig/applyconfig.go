// Package applyconfig is the hook of group "apply-config": it runs
// os-apply-config with the hook's environment, so the node's collected
// metadata (OS_CONFIG_FILES), not the deployment, decides what it
// renders; any signal transport then reports the result.
package applyconfig

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Hook is the apply-config hook.
var Hook = hooks.Hook{Group: "apply-config", Summary: "renders the config through os-apply-config", IDOptional: true, Run: Run}

// Settings, with their defaults.
const (
	CmdVar     = "HEAT_APPLY_CONFIG_CMD"
	DefaultCmd = "os-apply-config"
)

// Run runs the command (one program, no arguments) and reports its
// output and status.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	cmd := env.Setting(CmdVar, DefaultCmd)
	log.Debug("Running " + cmd)
	out := env.RunTool(ctx, hooks.Tool{Argv: []string{cmd}})
	red := d.Redactor()
	log.Info(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStdout)))))
	log.Debug(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStderr)))))
	if out.Status != 0 {
		log.Error(fmt.Sprintf("Error running apply-config: [%d]\n", out.Status))
	} else {
		log.Info("Completed apply-config.")
	}
	return hooks.Status(nil, out.Stdout, out.Stderr, out.Status), nil
}
