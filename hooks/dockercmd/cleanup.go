package dockercmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/durable"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Cleanup is the element's configure.d/50-heat-config-docker-cmd, which
// os-refresh-config runs before 55-heat-config: it removes the containers
// of docker-cmd deployments that are no longer in heat-config's
// deployments list, then gives containers started under a suffixed name
// (their deployment replaced one still running) the name they were meant
// to have, once that name is free.
var Cleanup = hooks.Script{
	Name:    "50-heat-config-docker-cmd",
	Summary: "removes the containers of docker-cmd deployments no longer in heat-config's list, then renames containers started under a suffixed name once their name is free",
	Environment: []argparse.Item{
		{Tag: hooks.DeploymentsVar, Text: "The deployments list (default " + hooks.DefaultDeployments + ")."},
		{Tag: CmdVar, Text: "The container command, docker (the default) or podman, or a path to either."},
		{Tag: SeenVar, Text: "The file that notes that this node has had a docker-cmd deployment (default " + DefaultSeen + "): without it and without one in the list, no container command is run."},
		{Tag: hooks.TimeoutVar, Text: "The deadline of each container command in seconds (default " + deadline.ForManual(deadline.DefaultHook) + ")."},
	},
	ExitStatus: "0, also when the list is missing or not JSON, or a container command fails; " +
		"1 when the list is JSON but not a list of deployments (nothing is removed).",
	Run: cleanup,
}

// cleanup removes and renames. A missing or unreadable (not JSON) list is a
// warning and nothing done, as in the reference; so is a container
// command that fails. A list that is JSON but not a list of deployments
// fails the run (exit 1) before anything is removed: the reference
// crashed there too, and removing containers on a misread list would
// remove them all.
func cleanup(ctx context.Context, henv hooks.Env) error {
	log := henv.Logger()
	path := henv.Setting(hooks.DeploymentsVar, hooks.DefaultDeployments)
	ids, err := configIDs(path, log)
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if ids == nil {
		return nil
	}
	c := cleaner{dk: Docker{Cmd: henv.Setting(CmdVar, DefaultCmd), Env: henv}, log: log}
	if !hooks.Installed(henv, c.dk.Cmd) {
		// No container command, so no container to remove or rename. The
		// package puts this script on every node; one that runs no
		// docker-cmd deployment says nothing on each pass (the reference
		// logged two warnings and its commands).
		return nil
	}
	seen := henv.Setting(SeenVar, DefaultSeen)
	if len(ids) > 0 {
		noteDockerCmd(seen, log)
	} else if _, err := os.Lstat(seen); errors.Is(err, fs.ErrNotExist) {
		// Never a docker-cmd deployment here, so no container of one to
		// remove or rename: no command (the reference ran its two `ps`
		// on every pass, and where docker is installed and not running
		// ours logged their "Cannot connect to the Docker daemon").
		return nil
	}
	c.deleteMissing(ctx, ids)
	c.rename(ctx)
	if ctx.Err() != nil {
		return exitcode.With(exitcode.Terminated, ctx.Err())
	}
	return nil
}

// configIDs are the ids of the docker-cmd deployments in the list at
// path; nil (with a warning) when there is no list to read.
func configIDs(path string, log *slog.Logger) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		log.Warn("No config file " + path)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, err := jsondoc.LoadsBytes(data)
	if err != nil {
		log.Warn("Could not load config json: " + jsondoc.PythonError(err))
		return nil, nil
	}
	list, ok := v.([]jsondoc.Value)
	if !ok {
		return nil, fmt.Errorf("%s: the deployments are not a list; no container removed", path)
	}
	ids := []string{}
	for i, item := range list {
		obj, ok := item.(*jsondoc.Object)
		if !ok {
			return nil, fmt.Errorf("%s: deployment %d is not an object; no container removed", path, i)
		}
		group, ok := obj.Get("group")
		if !ok {
			return nil, fmt.Errorf("%s: deployment %d has no group; no container removed", path, i)
		}
		if group != Group {
			continue
		}
		id, _ := obj.Get("id")
		s, ok := id.(string)
		if !ok {
			return nil, fmt.Errorf("%s: docker-cmd deployment %d has no string id; no container removed", path, i)
		}
		ids = append(ids, s)
	}
	return ids, nil
}

type cleaner struct {
	dk  Docker
	log *slog.Logger
}

// deleteMissing removes the containers of each config id on a managed
// container that is not in ids.
func (c cleaner) deleteMissing(ctx context.Context, ids []string) {
	for _, id := range c.currentIDs(ctx) {
		if slices.Contains(ids, id) {
			continue
		}
		c.log.Debug(id + " no longer exists, deleting containers")
		out := c.dk.Execute(ctx, []string{c.dk.Cmd, "ps", "-q", "-a",
			"--filter", "label=" + LabelManagedBy + "=" + ManagedBy,
			"--filter", "label=" + LabelConfigID + "=" + id})
		if out.Status != 0 {
			continue
		}
		for _, container := range strings.Fields(out.Stdout) {
			rm := c.dk.Execute(ctx, []string{c.dk.Cmd, "rm", "-f", container})
			if rm.Status != 0 {
				c.log.Error("Error removing container: " + container)
				c.log.Error(jsondoc.PyReprBytes(rm.RawStderr))
			}
		}
	}
}

// currentIDs are the config_id labels of the managed containers, each
// once, in the order listed (the reference's set had no order).
func (c cleaner) currentIDs(ctx context.Context) []string {
	out := c.dk.Execute(ctx, []string{c.dk.Cmd, "ps", "-a",
		"--filter", "label=" + LabelManagedBy + "=" + ManagedBy,
		"--format", c.dk.LabelFormat(LabelConfigID)})
	if out.Status != 0 {
		return nil
	}
	var ids []string
	for _, id := range strings.Fields(out.Stdout) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// rename gives each container whose container_name label is not its name
// that name, unless a container has it (the old one, not yet removed):
// then it stays as it is until a later run.
func (c cleaner) rename(ctx context.Context) {
	out := c.dk.Execute(ctx, []string{c.dk.Cmd, "ps", "-a",
		"--format", "{{.Names}} " + c.dk.LabelFormat(LabelContainerName)})
	if out.Status != 0 {
		return
	}
	var current []string
	want := map[string]string{}
	for _, line := range strings.Split(out.Stdout, "\n") {
		entry := strings.Fields(line)
		if len(entry) == 0 {
			continue
		}
		current = append(current, entry[0])
		if len(entry) < 2 || entry[0] == entry[len(entry)-1] {
			continue
		}
		want[entry[0]] = entry[len(entry)-1]
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		desired := want[name]
		if slices.Contains(current, desired) {
			c.log.Info(fmt.Sprintf(`Cannot rename "%s" since "%s" still exists`, name, desired))
			continue
		}
		c.dk.Execute(ctx, []string{c.dk.Cmd, "rename", name, desired})
	}
}

// SeenVar names the file that notes that this node has had a docker-cmd
// deployment, DefaultSeen where it is: once one was in the list, its
// containers may outlive it, and every later run looks for them.
const (
	SeenVar     = "HEAT_DOCKER_CMD_SEEN"
	DefaultSeen = "/var/lib/heat-config/docker-cmd.seen"
)

// seenNote is the note's text, for an operator who finds it.
const seenNote = "This node has had a docker-cmd deployment: 50-heat-config-docker-cmd looks for the containers of removed ones on every run.\n"

// noteDockerCmd writes the note unless it is there. A note that cannot
// be written is a warning: this run cleans up all the same, and a later
// one without a docker-cmd deployment in the list would not.
func noteDockerCmd(path string, log *slog.Logger) {
	if _, err := os.Lstat(path); err == nil {
		return
	}
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = durable.WriteFile(path, []byte(seenNote))
	}
	if err != nil {
		log.Warn(fmt.Sprintf("Could not note that this node has docker-cmd deployments (%s: %v): their containers may stay after the last one is removed",
			path, unwrapPath(err)))
	}
}

// unwrapPath is err without the path an *fs.PathError adds.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
