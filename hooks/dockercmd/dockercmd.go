// Package dockercmd is the hook of group "docker-cmd": the config names
// containers in docker-compose v1's form, and each is started with
// `docker run` (or entered with `docker exec`) in start_order, labelled
// with the deployment so that 50-heat-config-docker-cmd (Cleanup, the
// element's configure.d script) can remove them once the deployment is
// gone.
package dockercmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Group is the deployment group the hook runs.
const Group = "docker-cmd"

// Hook is the docker-cmd hook.
var Hook = hooks.Hook{Group: Group, Summary: "runs the config's containers with docker or podman", Run: Run,
	Scripts: []hooks.Script{Cleanup}}

// CmdVar names the container command (docker, podman, or a path to
// either); DefaultCmd is the reference's.
const (
	CmdVar     = "HEAT_DOCKER_CMD"
	DefaultCmd = "docker"
)

// Run starts the containers in start_order. A container whose status is
// not one of its exit_codes makes the deployment's status that status
// (the last such one wins); the others still run, as in the reference.
// deploy_stdout and deploy_stderr are the runs' non-empty outputs, one
// per line.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	if action, _ := d.Input("deploy_action"); action == "DELETE" {
		return hooks.Status(nil, "", "", 0), nil
	}
	if !jsondoc.PyTruthy(d.Config()) {
		log.Debug("No 'config' input found, nothing to do.")
		return hooks.Status(nil, "", "", 0), nil
	}
	containers, err := parseConfig(d.Config())
	if err != nil {
		return nil, err
	}
	dk := Docker{Cmd: env.Setting(CmdVar, DefaultCmd), Env: env, Redactor: d.Redactor()}
	labels := labelValues(d)
	var stdouts, stderrs []string
	status := 0
	for _, c := range containers {
		log.Debug("Running container: " + c.Name)
		var argv []string
		if c.Action == "run" {
			name, err := dk.UniqueName(ctx, c.Name)
			if err != nil {
				return nil, err
			}
			argv = append([]string{dk.Cmd, "run", "--name", name}, labelArgs(c.Name, labels)...)
			argv = append(argv, c.RunArgs...)
		} else {
			argv = append([]string{dk.Cmd, "exec"}, c.ExecArgs...)
			// The container named first is the one of this deployment,
			// which may have a unique suffix.
			argv = append(argv, dk.DiscoverName(ctx, c.Command[0], d.ID()))
			argv = append(argv, c.Command[1:]...)
		}
		out := dk.Execute(ctx, argv)
		if out.Stdout != "" {
			stdouts = append(stdouts, out.Stdout)
		}
		if out.Stderr != "" {
			// As the reference, the tool's errors go to the log as they
			// came; deploy_stderr has them too.
			fmt.Fprint(env.Stderr, dk.Redactor.Redact(out.Stderr))
			stderrs = append(stderrs, out.Stderr)
		}
		if !c.accepts(out.Status) {
			log.Error(fmt.Sprintf("Error running %s. [%d]\n", dk.shown(argv), out.Status))
			status = out.Status
		} else {
			log.Debug("Completed " + dk.shown(argv))
		}
	}
	return hooks.Status(nil, strings.Join(stdouts, "\n"), strings.Join(stderrs, "\n"), status), nil
}

// labels are the values of the labels every container of a deployment
// gets, beside its own container_name.
type labels struct{ stackID, resourceName, configID string }

func labelValues(d *deployment.Deployment) labels {
	// A missing input is Python's None, as the reference printed it.
	stack, _ := d.Input("deploy_stack_id")
	res, _ := d.Input("deploy_resource_name")
	return labels{stackID: jsondoc.PyStr(stack), resourceName: jsondoc.PyStr(res), configID: d.ID()}
}

// The labels 50-heat-config-docker-cmd finds containers by.
const (
	LabelConfigID      = "config_id"
	LabelContainerName = "container_name"
	LabelManagedBy     = "managed_by"
	ManagedBy          = "docker-cmd"
)

func labelArgs(container string, l labels) []string {
	return []string{
		"--label", "deploy_stack_id=" + l.stackID,
		"--label", "deploy_resource_name=" + l.resourceName,
		"--label", LabelConfigID + "=" + l.configID,
		"--label", LabelContainerName + "=" + container,
		"--label", LabelManagedBy + "=" + ManagedBy,
	}
}
