package kubelet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/argparse"
	"github.com/tripleo-go/agent/internal/durable"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Settings of the configure.d script, with their defaults.
const (
	ManifestsVar     = "HEAT_KUBELET_MANIFESTS"
	DefaultManifests = "/var/lib/heat-config/heat-config-kubelet/kubelet-manifests"
	ConfigVar        = hooks.DeploymentsVar
	DefaultConfig    = hooks.DefaultDeployments
)

// Configure is the element's configure.d script.
var Configure = hooks.Script{
	Name:    "50-heat-config-kubelet",
	Summary: "writes the manifest of each kubelet deployment's pod into the directory the kubelet watches, and removes the manifests of the deployments that are gone",
	Environment: []argparse.Item{
		{Tag: ConfigVar, Text: "The deployments file (default " + DefaultConfig + ")."},
		{Tag: ManifestsVar, Text: "The kubelet's manifests directory (default " + DefaultManifests + ")."},
	},
	Run: configure,
}

// configure makes the manifests directory hold <id>.json, the pod, for
// each kubelet deployment, and no other *.json. Each manifest is
// replaced in one rename, and the stale ones are removed after the new
// ones are written: the kubelet never sees a part of a manifest, nor an
// empty directory that would stop every pod (the reference removed all
// first). A deployment that cannot be written is logged and skipped, as
// in the reference: its hook then reports the failure to Heat. The
// directory is made for the first manifest: on a node without kubelet
// deployments (make install lays the script out everywhere) it leaves
// nothing behind.
func configure(ctx context.Context, env hooks.Env) error {
	log := env.Logger()
	dir := env.Setting(ManifestsVar, DefaultManifests)
	_, list, err := hooks.ReadDeployments(env)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			// The reference went on with no deployments, which stopped
			// every pod; a broken file is not the end of every deployment.
			err = fmt.Errorf("%w; the manifests are left as they are", err)
		}
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	keep := map[string]bool{}
	for _, item := range list {
		name, err := writeManifest(dir, item)
		if err != nil {
			log.Error(err.Error())
		}
		if name != "" {
			keep[name] = true
		}
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // no kubelet deployment, none before
	}
	if err != nil {
		log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	var failed error
	for _, ent := range ents {
		name := ent.Name()
		_, staged := durable.StagedFor(name)
		stale := strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") && !keep[name]
		if !stale && !staged {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			log.Error(err.Error())
			failed = err
		}
	}
	if failed != nil {
		return exitcode.With(exitcode.Failure, failed)
	}
	return nil
}

// writeManifest writes the pod of one kubelet deployment, as the
// reference's json.dump(indent=2) did (0600), and returns the file's
// name; other groups are skipped.
func writeManifest(dir string, item jsondoc.Value) (string, error) {
	o, ok := item.(*jsondoc.Object)
	if !ok {
		return "", nil
	}
	if g, _ := o.Get("group"); g != "kubelet" {
		return "", nil
	}
	id, _ := o.Get("id")
	ids, _ := id.(string)
	if err := deployment.CheckID(ids); err != nil {
		return "", fmt.Errorf("deployment %s: %w", deployment.Label(o), err)
	}
	name := ids + ".json"
	if err := hooks.PrepareDir(dir); err != nil {
		return name, err
	}
	config, ok := o.Get("config")
	if !ok {
		// Keep the pod of a deployment whose manifest cannot be written
		// now: it is not gone.
		return name, fmt.Errorf("deployment %s has no config", deployment.Label(o))
	}
	return name, durable.WriteFile(filepath.Join(dir, name), []byte(jsondoc.DumpsIndent(config, 2)))
}
