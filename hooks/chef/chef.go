// Package chef is the hook of group "chef": the config is a run list
// (JSON text), applied by chef-client in local mode (chef zero) with the
// inputs as the node's attributes, from a kitchen of cookbooks, roles and
// environments that the hook may clone with git.
package chef

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/secret"
)

// Hook is the chef hook.
var Hook = hooks.Hook{Group: "chef", Summary: "applies the config as a run list with chef-client in local mode", Run: Run}

// Settings, with their defaults.
const (
	WorkingVar     = "HEAT_CHEF_WORKING"
	OutputsVar     = "HEAT_CHEF_OUTPUTS"
	CmdVar         = "HEAT_CHEF_CMD"
	GitVar         = "HEAT_CHEF_GIT_CMD"
	DefaultWorking = "/var/lib/heat-config/heat-config-chef"
	DefaultOutputs = "/var/run/heat-config/heat-config-chef"
	DefaultCmd     = "chef-client"
	DefaultGit     = "git"
)

// HostnameError is deploy_stderr when `hostname -f` fails: the node file
// is named after the fqdn.
const HostnameError = "Could not determine hostname with hostname -f"

// deployKeys are the inputs Heat adds that are no node attributes.
var deployKeys = map[string]bool{
	"deploy_server_id": true, "deploy_action": true, "deploy_stack_id": true, "deploy_resource_name": true,
	"deploy_signal_transport": true, "deploy_signal_id": true, "deploy_signal_verb": true,
}

// baseConfig starts client.rb: chef-client in local mode, logging to
// stdout (deploy_stdout).
const baseConfig = "log_level :debug\nlog_location STDOUT\nlocal_mode true\nchef_zero.enabled true"

// Run writes <working>/node/<fqdn>.json and <working>/client.rb and runs
// chef-client -z with them; with options.kitchen, it first clones the
// kitchen into kitchen_path.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	working := env.Setting(WorkingVar, DefaultWorking)
	outputs := env.Setting(OutputsVar, DefaultOutputs)
	for _, dir := range []string{outputs, working} {
		if err := hooks.PrepareDir(dir); err != nil {
			return nil, err
		}
	}
	runList, err := runList(d)
	if err != nil {
		return nil, err
	}
	kitchenPath := hooks.StringOption(d, "kitchen_path")
	if kitchenPath == "" {
		kitchenPath = pypath.Join(working, "kitchen")
	}
	config := baseConfig +
		"\ncookbook_path '" + pypath.Join(kitchenPath, "cookbooks") + "'" +
		"\nrole_path '" + pypath.Join(kitchenPath, "roles") + "'" +
		"\nenvironment_path '" + pypath.Join(kitchenPath, "environments") + "'"

	if kitchen := hooks.StringOption(d, "kitchen"); kitchen != "" {
		if res := cloneKitchen(ctx, env, d, kitchen, kitchenPath, working); res != nil {
			return res, nil
		}
	}

	fqdn, err := env.LookupFQDN(ctx)
	if err != nil {
		log.Error(HostnameError + ": " + err.Error())
		return statusFirst(1, "", HostnameError), nil
	}
	if fqdn == "" || strings.ContainsAny(fqdn, "/\x00") || fqdn == "." || fqdn == ".." {
		return nil, fmt.Errorf("hostname -f gave %q, which cannot name the node file", fqdn)
	}
	node := jsondoc.NewObject(len(d.Inputs()) + 1)
	for _, in := range d.Inputs() {
		value := in.Value
		if !in.HasValue {
			value = ""
		}
		switch {
		case in.Name == "environment":
			config += "\nenvironment '" + jsondoc.PyStr(value) + "'"
		case !deployKeys[in.Name]:
			node.Set(in.Name, value)
		}
	}
	node.Set("run_list", runList)
	nodePath := pypath.Join(working, "node")
	if err := hooks.PrepareDir(nodePath); err != nil {
		return nil, err
	}
	nodeFile := pypath.Join(nodePath, fqdn+".json")
	if err := hooks.WriteFile(nodeFile, []byte(jsondoc.DumpsIndent(node, 4)), 0o600); err != nil {
		return nil, err
	}
	config += "\nnode_path '" + nodePath + "'"
	configPath := pypath.Join(working, "client.rb")
	if err := hooks.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, err
	}

	outputsPath := pypath.Join(outputs, d.ID())
	argv := []string{env.Setting(CmdVar, DefaultCmd), "-z", "--config", configPath, "-j", nodeFile}
	log.Debug("Running " + strings.Join(argv, " "))
	out := env.RunTool(ctx, hooks.Tool{
		Argv: argv, Env: environ.With(env.Environ, "heat_outputs_path", outputsPath), Dir: working,
	})
	red := d.Redactor()
	log.Debug("Chef output: " + jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStdout)))))
	if out.NotFound {
		log.Error(argv[0] + " is not installed")
	} else if out.Status != 0 {
		log.Error(fmt.Sprintf("Chef return code %d:\n%s", out.Status, jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStderr))))))
	}
	res := statusFirst(out.Status, out.Stdout, out.Stderr)
	hooks.ReadOutputs(res, d, outputsPath)
	return res, nil
}

// statusFirst is the reference's result dict, in its order.
func statusFirst(code int, stdout, stderr string) *jsondoc.Object {
	res := jsondoc.NewObject(5)
	res.Set("deploy_status_code", jsondoc.Int(int64(code)))
	res.Set("deploy_stdout", stdout)
	res.Set("deploy_stderr", stderr)
	return res
}

// runList is the config read as JSON (a run list); a config that is
// already JSON data is taken as it is.
func runList(d *deployment.Deployment) (jsondoc.Value, error) {
	text, ok := d.Config().(string)
	if !ok {
		return d.Config(), nil
	}
	v, err := jsondoc.LoadsBytes([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%w: the chef config is not a JSON run list: %v", hooks.ErrConfig, err)
	}
	return v, nil
}

// cloneKitchen clones the kitchen into kitchenPath (removed first when
// the deployment is an UPDATE, for a fresh clone); it returns the result
// to report when git fails, else nil.
func cloneKitchen(ctx context.Context, env hooks.Env, d *deployment.Deployment, kitchen, kitchenPath, working string) *jsondoc.Object {
	log := env.Logger()
	shown := secret.RedactURL(kitchen)
	log.Debug("Cloning kitchen from " + shown)
	if action, _ := firstInput(d, "deploy_action"); action == "UPDATE" {
		if err := os.RemoveAll(kitchenPath); err != nil {
			log.Warn(fmt.Sprintf("removing %s: %v", kitchenPath, err))
		}
	}
	out := env.RunTool(ctx, hooks.Tool{Argv: []string{env.Setting(GitVar, DefaultGit), "clone", kitchen, kitchenPath}, Dir: working})
	if out.Status == 0 {
		return nil
	}
	stderr := strings.ReplaceAll(out.Stderr, kitchen, shown)
	log.Error(fmt.Sprintf("Error cloning kitchen from %s into %s: %s", shown, kitchenPath, jsondoc.PyReprBytes([]byte(stderr))))
	return statusFirst(out.Status, out.Stdout, stderr)
}

// firstInput is the value of the first input called name, as the
// reference looks deploy_action up.
func firstInput(d *deployment.Deployment, name string) (jsondoc.Value, bool) {
	for _, in := range d.Inputs() {
		if in.Name == name {
			return in.Value, true
		}
	}
	return nil, false
}
