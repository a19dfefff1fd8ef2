package hiera

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// DisableName is the program that retires this element's step once the
// heat-agents hiera hook has taken over: configure.d/10-hiera-disable.
const DisableName = "10-hiera-disable"

// Where the element's pieces are installed, under $NODECONFIG_ROOT; the
// programs' own variables, when set, say where the directories are.
const (
	ConfigFile         = "/etc/puppet/hiera.yaml"
	templatesDir       = "/usr/libexec/os-apply-config/templates"
	refreshDir         = "/usr/libexec/os-refresh-config"
	templateOfConfig   = "etc/puppet/hiera.yaml"
	datafilesStep      = "configure.d/" + Name
	hookConfigYAMLWord = "yaml"
)

// Disable removes the element's hiera.yaml template, its
// 40-hiera-datafiles step and the YAML data files it wrote, when
// /etc/puppet/hiera.yaml is the hook's (JSON backend only: the word
// "yaml" is nowhere in it). Both writing hiera.yaml would fight over it
// on every run; the hook's is the one heat-agents keeps.
func Disable(_ context.Context, _ []string, env Env) error {
	root := environ.Get(env.Environ, RootVar)
	config, err := os.ReadFile(root + ConfigFile)
	if err != nil || bytes.Contains(config, []byte(hookConfigYAMLWord)) {
		return nil // no hook's configuration (or the element's own)
	}
	templates := root + templatesDir
	if v := environ.Get(env.Environ, "OS_CONFIG_APPLIER_TEMPLATES"); v != "" {
		templates = v
	}
	refresh := root + refreshDir
	if v := environ.Get(env.Environ, "OS_REFRESH_CONFIG_BASE_DIR"); v != "" {
		refresh = v
	}
	victims := []string{filepath.Join(templates, templateOfConfig), filepath.Join(refresh, datafilesStep)}
	data, _ := filepath.Glob(filepath.Join(root+DataDir, "*.yaml"))
	for _, p := range data {
		if !strings.HasPrefix(filepath.Base(p), ".") {
			victims = append(victims, p)
		}
	}
	for _, p := range victims {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue // as [ -f ]: a link counts by what it points to
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(env.Stderr, "%s: %v\n", DisableName, err)
			return exitcode.With(exitcode.Failure, err)
		}
	}
	return nil
}
