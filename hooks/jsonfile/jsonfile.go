// Package jsonfile is the hook of group "json-file": the config (a
// StructuredConfig) maps file paths to data, each written as JSON.
package jsonfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// Hook is the json-file hook.
var Hook = hooks.Hook{Group: "json-file", Summary: "writes each entry of the config as a JSON file", IDOptional: true, Run: Run}

// Run writes each entry of the config to its path (missing directories
// are created 0700; the file gets the default mode and is truncated) as
// indented JSON with sorted keys, in the config's order.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	var c *jsondoc.Object
	switch x := d.Config().(type) {
	case nil:
		c = jsondoc.NewObject(0) // the reference crashed; nothing to write
	case *jsondoc.Object:
		c = x
	default:
		return nil, fmt.Errorf("%w: the json-file hook's config is %s, not an object of paths", hooks.ErrConfig, jsondoc.Dumps(x))
	}
	for i := 0; i < c.Len(); i++ {
		path, data := c.At(i)
		if dir := filepath.Dir(path); dir != "." {
			if err := hooks.PrepareDir(dir); err != nil {
				return nil, err
			}
		}
		if err := os.WriteFile(path, []byte(jsondoc.DumpsIndentSorted(data, 4)), 0o666); err != nil {
			return nil, err
		}
	}
	return hooks.Status(nil, "", "", 0), nil
}
