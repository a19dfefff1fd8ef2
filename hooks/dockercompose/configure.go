package dockercompose

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// The deployments file (os-apply-config renders it), and the project's
// file, which docker-compose reads.
const (
	ConfigVar     = hooks.DeploymentsVar
	DefaultConfig = hooks.DefaultDeployments
	ComposeFile   = "docker-compose.yml"
)

// Configure is the element's configure.d script.
var Configure = hooks.Script{
	Name:    "50-heat-config-docker-compose",
	Summary: "writes the docker-compose.yml of each docker-compose deployment, and kills the containers of the projects whose deployment is gone",
	Environment: []argparse.Item{
		{Tag: ConfigVar, Text: "The deployments file (default " + DefaultConfig + ")."},
		{Tag: WorkingVar, Text: "The projects' directory (default " + DefaultWorking + ")."},
		{Tag: CmdVar, Text: "The docker-compose command (default " + DefaultCmd + ")."},
	},
	Run: configure,
}

// configure first retires the projects that no deployment (of any
// group) names any more: `docker-compose kill` in the project, then its
// docker-compose.yml removed (the directory and its env files stay, as
// in the reference). Then it writes <working>/<name>/docker-compose.yml
// for each docker-compose deployment: an object config as PyYAML's
// safe_dump wrote it, a string as it is. The working directory is made
// when a project is written: on a node without docker-compose
// deployments (make install lays the script out everywhere) it leaves
// nothing behind.
func configure(ctx context.Context, env hooks.Env) error {
	log := env.Logger()
	dir := env.Setting(WorkingVar, DefaultWorking)
	_, list, err := hooks.ReadDeployments(env)
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	names := map[string]bool{}
	for _, item := range list {
		if o, ok := item.(*jsondoc.Object); ok {
			if name, ok := o.Get("name"); ok {
				names[jsondoc.PyStr(name)] = true
			}
		}
	}
	if err := cleanupStale(ctx, env, dir, names); err != nil {
		return exitcode.With(exitcode.Failure, err)
	}
	for _, item := range list {
		if err := writeCompose(dir, item); err != nil {
			// The hook reports this deployment's failure to Heat; failing
			// here would stop os-refresh-config before 55-heat-config, and
			// no deployment of the node would run or be signalled.
			log.Error(err.Error())
		}
	}
	return nil
}

// cleanupStale kills and retires the projects no deployment names.
func cleanupStale(ctx context.Context, env hooks.Env, dir string, names map[string]bool) error {
	log := env.Logger()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no project yet
	}
	if err != nil {
		log.Error(err.Error())
		return err
	}
	var stale []string
	for _, ent := range ents {
		file := pypath.Join(pypath.Join(dir, ent.Name()), ComposeFile)
		if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() || names[ent.Name()] {
			continue
		}
		stale = append(stale, ent.Name())
	}
	if len(stale) == 0 {
		return nil
	}
	cmd := env.Setting(CmdVar, DefaultCmd)
	installed := hooks.Installed(env, cmd)
	if !installed {
		// Nothing to kill them with (nor could the hook have started
		// them): one line for the run, not a kill failing with 127 for
		// each. The reference crashed on the missing command, status 1,
		// and so stopped os-refresh-config, on every pass.
		log.Warn(fmt.Sprintf("%s is not installed: the projects no deployment names (%s, in %s) are retired without %s kill",
			cmd, strings.Join(stale, ", "), dir, DefaultCmd))
	}
	var failed error
	for _, name := range stale {
		proj := pypath.Join(dir, name)
		file := pypath.Join(proj, ComposeFile)
		if installed {
			log.Info("Killing the containers of " + proj + ": no deployment is named " + name)
			out := env.RunTool(ctx, hooks.Tool{Argv: []string{cmd, "kill"}, Dir: proj})
			if out.Status != 0 {
				// As in the reference, the project is retired anyway: its
				// deployment is gone, and a kill that fails would fail again.
				log.Warn(fmt.Sprintf("%s kill in %s: status %d: %s", cmd, proj, out.Status, out.Stderr))
			}
		}
		if err := os.Remove(file); err != nil {
			log.Error(err.Error())
			failed = err
		}
	}
	return failed
}

// writeCompose writes the docker-compose.yml of one docker-compose
// deployment; other groups are not its business.
func writeCompose(dir string, item jsondoc.Value) error {
	o, ok := item.(*jsondoc.Object)
	if !ok {
		return nil
	}
	if g, _ := o.Get("group"); g != "docker-compose" {
		return nil
	}
	name, _ := o.Get("name")
	ns, _ := name.(string)
	proj, err := projectDir(dir, ns)
	if err != nil {
		return err
	}
	var text string
	switch c, _ := o.Get("config"); c := c.(type) {
	case nil:
	case string:
		text = c
	case *jsondoc.Object:
		text = pyyaml.Dump(c)
	default:
		return fmt.Errorf("deployment %s: %w: the docker-compose config is neither a mapping nor YAML text", deployment.Label(o), hooks.ErrConfig)
	}
	for _, d := range []string{dir, proj} {
		if err := hooks.PrepareDir(d); err != nil {
			return err
		}
	}
	return hooks.WriteFile(pypath.Join(proj, ComposeFile), []byte(text), 0o600)
}
