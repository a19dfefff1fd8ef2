// Package cfninit is the hook of group "cfn-init": the config is the
// AWS::CloudFormation::Init section of a resource's metadata, which the
// hook leaves where heat-cfntools' cfn-init looks for its last metadata,
// then runs cfn-init. It lets templates written for CloudFormation
// metadata move to software configs and deployments.
package cfninit

import (
	"context"
	"fmt"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
)

// Hook is the cfn-init hook.
var Hook = hooks.Hook{Group: "cfn-init", Summary: "applies the config as AWS::CloudFormation::Init metadata with cfn-init", IDOptional: true, Run: Run}

// Settings, with their defaults. DefaultMetadataDir is where cfn-init,
// run without a stack and resource, reads its last metadata: its own path,
// fixed in heat-cfntools.
const (
	MetadataDirVar     = "HEAT_CFN_INIT_LAST_METADATA_DIR"
	CmdVar             = "HEAT_CFN_INIT_CMD"
	DefaultMetadataDir = "/var/cache/heat-cfntools"
	DefaultCmd         = "cfn-init"
)

// MetadataFile is the file's name in the metadata directory.
const MetadataFile = "last_metadata"

// InitKey is the metadata key cfn-init applies.
const InitKey = "AWS::CloudFormation::Init"

// Run writes {"AWS::CloudFormation::Init": config} to
// <dir>/last_metadata and runs cfn-init without arguments: with no
// credentials it falls back to that file.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	config, err := initConfig(d)
	if err != nil {
		return nil, err
	}
	meta := jsondoc.NewObject(1)
	meta.Set(InitKey, config)

	dir := env.Setting(MetadataDirVar, DefaultMetadataDir)
	if err := hooks.PrepareDir(dir); err != nil {
		return nil, err
	}
	// 0600: the metadata may carry credentials, and cfn-init rewrites
	// the file 0600 itself.
	if err := hooks.WriteFile(pypath.Join(dir, MetadataFile), []byte(jsondoc.Dumps(meta)), 0o600); err != nil {
		return nil, err
	}

	cmd := env.Setting(CmdVar, DefaultCmd)
	log.Debug("Running " + cmd)
	out := env.RunTool(ctx, hooks.Tool{Argv: []string{cmd}})
	red := d.Redactor()
	if len(out.RawStdout) > 0 {
		log.Info(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStdout)))))
	}
	if len(out.RawStderr) > 0 {
		log.Info(jsondoc.PyReprBytes([]byte(red.Redact(string(out.RawStderr)))))
	}
	if out.Note != "" {
		log.Warn(out.Note)
	}
	if out.Status != 0 {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", cmd, out.Status))
	} else {
		log.Info("Completed " + cmd)
	}
	return hooks.Status(nil, out.Stdout, out.Stderr, out.Status), nil
}

// initConfig is the config as cfn-init metadata: an object as it is, a
// string parsed as JSON (any JSON, as the reference), none or null as {}.
// Other shapes cannot be metadata (the reference crashed on them).
func initConfig(d *deployment.Deployment) (jsondoc.Value, error) {
	switch c := d.Config().(type) {
	case nil:
		return jsondoc.NewObject(0), nil
	case *jsondoc.Object:
		return c, nil
	case string:
		v, err := jsondoc.LoadsBytes([]byte(c))
		if err != nil {
			// The config itself is not quoted: it may hold credentials.
			return nil, fmt.Errorf("%w: the cfn-init hook's config is a string that is not JSON: %v", hooks.ErrConfig, err)
		}
		return v, nil
	default:
		return nil, fmt.Errorf("%w: the cfn-init hook's config is %s, not an object or a JSON string", hooks.ErrConfig, jsondoc.KindOf(c))
	}
}
