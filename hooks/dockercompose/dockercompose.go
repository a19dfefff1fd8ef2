// Package dockercompose is the hook of group "docker-compose": the
// deployment is a docker-compose project named after the deployment, in
// <working>/<name>. Its docker-compose.yml is written by the element's
// configure.d script (Configure) before the hooks run; the hook writes
// the env files the services name from the env_files input, then runs
// `docker-compose up -d --no-build` in the project.
package dockercompose

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// Hook is the docker-compose hook.
var Hook = hooks.Hook{
	Group:   "docker-compose",
	Summary: "writes the env files of the docker-compose project named after the deployment and runs `docker-compose up -d --no-build` in it",
	Run:     Run,
	// The reference reads the name, never the id.
	IDOptional: true,
	Scripts:    []hooks.Script{Configure},
}

// Settings, with their defaults (the reference's names).
const (
	WorkingVar     = "HEAT_DOCKER_COMPOSE_WORKING"
	CmdVar         = "HEAT_DOCKER_COMPOSE_CMD"
	DefaultWorking = "/var/lib/heat-config/heat-config-docker-compose"
	DefaultCmd     = "docker-compose"
)

// Run writes the env files and brings the project up. A DELETE action
// and an empty config do nothing and succeed (the reference crashed
// there, after it had meant to succeed); the project's containers are
// stopped by Configure once the deployment is gone from the metadata.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	proj, err := projectDir(env.Setting(WorkingVar, DefaultWorking), d.Name())
	if err != nil {
		return nil, err
	}
	if err := hooks.PrepareDir(proj); err != nil {
		return nil, err
	}
	if action, _ := d.InputString("deploy_action"); action == "DELETE" {
		return hooks.Status(nil, "", "", 0), nil
	}
	if !jsondoc.PyTruthy(d.Config()) {
		log.Debug("No 'config' input found, nothing to do.")
		return hooks.Status(nil, "", "", 0), nil
	}
	names, err := envFileNames(d.Config())
	if err != nil {
		return nil, err
	}
	files, err := inputEnvFiles(d)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		content, ok := files[name]
		if !ok {
			continue // docker-compose says which is missing
		}
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(proj, name)
		}
		if err := hooks.PrepareDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
		if err := hooks.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, err
		}
	}

	argv := []string{env.Setting(CmdVar, DefaultCmd), "up", "-d", "--no-build"}
	shown := jsondoc.PyRepr(toValues(argv))
	log.Debug("Running " + shown)
	out := env.RunTool(ctx, hooks.Tool{Argv: argv, Dir: proj})
	red := d.Redactor()
	log.Debug(red.Redact(jsondoc.PyReprBytes(out.RawStdout)))
	log.Debug(red.Redact(jsondoc.PyReprBytes(out.RawStderr)))
	if out.Status != 0 {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", shown, out.Status))
	} else {
		log.Debug("Completed " + shown)
	}
	return hooks.Status(nil, out.Stdout, out.Stderr, out.Status), nil
}

// projectDir is <working>/<name>: the name must be one directory's name
// (the reference joined whatever it was, or crashed without one).
func projectDir(working, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return "", fmt.Errorf("deployment name %q cannot name a docker-compose project directory", name)
	}
	return pypath.Join(working, name), nil
}

func toValues(s []string) []jsondoc.Value {
	out := make([]jsondoc.Value, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// envFileNames are the env_file entries of the services, in order: a
// service's env_file is one name or a list of them. The services are
// the config's top-level mappings (version 1 files, the reference's)
// and those under "services" (version 2 and 3 files, where the
// reference crashed on the "version" string). A string config is YAML.
func envFileNames(config jsondoc.Value) ([]string, error) {
	text, ok := config.(string)
	if !ok {
		text = jsondoc.Dumps(config) // JSON is YAML
	}
	var doc any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("config: invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the docker-compose config is not a mapping of services", hooks.ErrConfig)
	}
	var names []string
	add := func(service any) {
		s, _ := service.(map[string]any)
		switch v := s["env_file"].(type) {
		case string:
			names = append(names, v)
		case []any:
			for _, item := range v {
				if name, ok := item.(string); ok {
					names = append(names, name)
				}
			}
		}
	}
	for _, k := range sortedKeys(top) {
		add(top[k])
	}
	if services, ok := top["services"].(map[string]any); ok {
		for _, k := range sortedKeys(services) {
			add(services[k])
		}
	}
	return names, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// inputEnvFiles is the env_files input as file name → content: a list
// of {"file_name", "content"} objects, given as a Python literal or
// JSON text (Heat's String input), or as a list (a Json input).
func inputEnvFiles(d *deployment.Deployment) (map[string]string, error) {
	v, _ := d.Input("env_files")
	if !jsondoc.PyTruthy(v) {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		var err error
		if v, err = literalEval(s); err != nil {
			return nil, fmt.Errorf("input env_files: %w", err)
		}
	}
	list, ok := v.([]jsondoc.Value)
	if !ok {
		return nil, fmt.Errorf("input %w", errNotList)
	}
	files := make(map[string]string, len(list))
	for _, item := range list {
		o, ok := item.(*jsondoc.Object)
		if !ok {
			return nil, fmt.Errorf("input %w", errNotList)
		}
		name, nok := o.Get("file_name")
		content, cok := o.Get("content")
		ns, nok2 := name.(string)
		cs, cok2 := content.(string)
		if !nok || !cok || !nok2 || !cok2 {
			return nil, fmt.Errorf("input %w", errNotList)
		}
		files[ns] = cs
	}
	return files, nil
}
