// Package ansible is the hook of group "ansible": the config is a
// playbook, run by ansible-playbook with the inputs as extra variables.
package ansible

import (
	"context"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// Hook is the ansible hook.
var Hook = hooks.Hook{Group: "ansible", Summary: "runs the config as an Ansible playbook", Run: Run}

// Settings, with their defaults.
const (
	WorkingVar       = "HEAT_ANSIBLE_WORKING"
	OutputsVar       = "HEAT_ANSIBLE_OUTPUTS"
	CmdVar           = "HEAT_ANSIBLE_CMD"
	InventoryVar     = "HEAT_ANSIBLE_INVENTORY"
	DefaultWorking   = "/var/lib/heat-config/heat-config-ansible"
	DefaultOutputs   = "/var/run/heat-config/heat-config-ansible"
	DefaultCmd       = "ansible-playbook"
	DefaultInventory = "localhost,"
)

// NothingToDo is the warning, and deploy_stderr, for an empty config.
const NothingToDo = "No 'config' input found, nothing to do."

// Run writes <working>/<id>_variables.json and <working>/<id>_playbook.yaml
// and runs the playbook against the inventory.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	working := env.Setting(WorkingVar, DefaultWorking)
	outputs := env.Setting(OutputsVar, DefaultOutputs)
	for _, dir := range []string{outputs, working} {
		if err := hooks.PrepareDir(dir); err != nil {
			return nil, err
		}
	}
	// The reference's dict: heat_config_id first, the inputs, then
	// heat_outputs_path; a name set again keeps its first place.
	vars := jsondoc.NewObject(len(d.Inputs()) + 2)
	vars.Set("heat_config_id", d.ID())
	for _, in := range d.Inputs() {
		if in.HasValue {
			vars.Set(in.Name, in.Value)
		} else {
			vars.Set(in.Name, "")
		}
	}
	inventory := env.Setting(InventoryVar, DefaultInventory)
	if inv := hooks.StringOption(d, "inventory"); inv != "" {
		inventory = pypath.Join(working, inv)
	}
	fn := pypath.Join(working, d.ID()+"_playbook.yaml")
	varsFile := pypath.Join(working, d.ID()+"_variables.json")
	outputsPath := pypath.Join(outputs, d.ID())
	vars.Set("heat_outputs_path", outputsPath)

	if !jsondoc.PyTruthy(d.Config()) {
		// The reference exited without a result, which Heat took for
		// success: say the same to Heat, in words.
		log.Warn(NothingToDo)
		return hooks.Status(nil, "", NothingToDo, 0), nil
	}
	if err := hooks.WriteFile(varsFile, []byte(jsondoc.Dumps(vars)), 0o600); err != nil {
		return nil, err
	}
	if err := hooks.WriteFile(fn, []byte(d.ConfigString()), 0o600); err != nil {
		return nil, err
	}

	argv := []string{env.Setting(CmdVar, DefaultCmd), "-i", inventory}
	if m := hooks.StringOption(d, "modulepath"); m != "" {
		argv = append(argv, "--module-path", m)
	}
	if s := hooks.StringOption(d, "skip_tags"); s != "" {
		argv = append(argv, "--skip-tags", s)
	}
	if t := hooks.StringOption(d, "tags"); t != "" {
		argv = append(argv, "--tags", t)
	}
	argv = append(argv, fn, "--extra-vars", "@"+varsFile)
	toolEnv := env.Environ
	if cb := hooks.StringOption(d, "callback_plugins"); cb != "" {
		toolEnv = environ.With(toolEnv, "ANSIBLE_CALLBACK_PLUGINS", cb)
	}

	log.Debug("Running " + strings.Join(argv, " "))
	out := env.RunTool(ctx, hooks.Tool{Argv: argv, Env: toolEnv, Dir: working})
	if out.NotFound {
		log.Warn("ansible not installed yet")
	}
	log.Info(fmt.Sprintf("Return code %d", out.Status))
	red := d.Redactor()
	for _, b := range [][]byte{out.RawStdout, out.RawStderr} {
		if len(b) > 0 {
			log.Info(jsondoc.PyReprBytes([]byte(red.Redact(string(b)))))
		}
	}
	if out.Status != 0 {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", fn, out.Status))
	} else {
		log.Info("Completed " + fn)
	}
	return hooks.Result(d, outputsPath, out), nil
}
