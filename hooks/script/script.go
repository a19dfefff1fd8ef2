// Package script is the hook of group "script": the config is a program
// (it needs a #! line), run with every input as an environment variable.
package script

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// Hook is the script hook.
var Hook = hooks.Hook{Group: "script", Summary: "runs the config as a script", Run: Run}

// Settings, with their defaults.
const (
	WorkingVar     = "HEAT_SCRIPT_WORKING"
	OutputsVar     = "HEAT_SCRIPT_OUTPUTS"
	DefaultWorking = "/var/lib/heat-config/heat-config-script"
	DefaultOutputs = "/var/run/heat-config/heat-config-script"
)

// Run writes the config to <working>/<id> (0700) and runs it there with
// the hook's environment plus the inputs and heat_outputs_path.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	working := env.Setting(WorkingVar, DefaultWorking)
	outputs := env.Setting(OutputsVar, DefaultOutputs)
	for _, dir := range []string{outputs, working} {
		if err := hooks.PrepareDir(dir); err != nil {
			return nil, err
		}
	}
	toolEnv := env.Environ
	for _, in := range d.Inputs() {
		value := hooks.EnvValue(in.Value)
		if err := hooks.CheckVariable(in.Name, value); err != nil {
			return nil, err
		}
		toolEnv = environ.With(toolEnv, in.Name, value)
		log.Info(in.Name + "=" + hooks.LogValue(in.Name, value))
	}
	fn := pypath.Join(working, d.ID())
	outputsPath := pypath.Join(outputs, d.ID())
	toolEnv = environ.With(toolEnv, "heat_outputs_path", outputsPath)
	if err := hooks.WriteFile(fn, []byte(d.ConfigString()), 0o700); err != nil {
		return nil, err
	}

	log.Debug("Running " + fn)
	out := env.RunTool(ctx, hooks.Tool{Argv: []string{fn}, Env: toolEnv, Dir: working})
	red := d.Redactor()
	log.Info(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStdout)))))
	log.Debug(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStderr)))))
	if out.Status != 0 {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", fn, out.Status))
	} else {
		log.Info("Completed " + fn)
	}
	return hooks.Result(d, outputsPath, out), nil
}
