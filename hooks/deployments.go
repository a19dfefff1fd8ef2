package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// The deployments list that the hooks' configure.d scripts read, as
// 55-heat-config reads it (os-apply-config renders it from the metadata).
const (
	DeploymentsVar     = deployment.ListVar
	DefaultDeployments = deployment.DefaultListFile
)

// ReadDeployments reads the deployments list DeploymentsVar names and
// returns its path and items. A missing file is "No config file PATH"
// (the reference's words), wrapping fs.ErrNotExist; a list that does not
// parse names the file.
func ReadDeployments(env Env) (string, []jsondoc.Value, error) {
	path := env.Setting(DeploymentsVar, DefaultDeployments)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, noConfigFile{path, err}
	} else if err != nil {
		return path, nil, err
	}
	list, err := deployment.List(data)
	if err != nil {
		return path, nil, fmt.Errorf("%s: %w", path, err)
	}
	return path, list, nil
}

type noConfigFile struct {
	path string
	err  error
}

func (e noConfigFile) Error() string { return "No config file " + e.path }
func (e noConfigFile) Unwrap() error { return e.err }
