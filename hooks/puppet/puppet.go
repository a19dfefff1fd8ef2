// Package puppet is the hook of group "puppet": the config is a manifest
// for `puppet apply`, the inputs are facts (FACTER_<name>) and, with
// enable_hiera, a hiera data file.
package puppet

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
)

// Hook is the puppet hook.
var Hook = hooks.Hook{Group: "puppet", Summary: "applies the config as a Puppet manifest", Run: Run}

// Settings, with their defaults.
const (
	WorkingVar     = "HEAT_PUPPET_WORKING"
	OutputsVar     = "HEAT_PUPPET_OUTPUTS"
	CmdVar         = "HEAT_PUPPET_CMD"
	LogDirVar      = "HEAT_PUPPET_LOGDIR"
	HieraDirVar    = "HEAT_PUPPET_HIERA_DATADIR"
	DefaultWorking = "/var/lib/heat-config/heat-config-puppet"
	DefaultOutputs = "/var/run/heat-config/heat-config-puppet"
	DefaultCmd     = "puppet"
	DefaultLogDir  = "/var/run/heat-config/deployed"
	DefaultHiera   = "/etc/puppet/hieradata"
)

// The log destinations the debug and verbose options add (fixed, as in
// the reference).
const (
	DebugLog   = "/var/log/puppet/heat-debug.log"
	VerboseLog = "/var/log/puppet/heat-verbose.log"
)

// Run writes the manifest to <working>/<id>.pp and applies it with
// --detailed-exitcodes: 0 (no changes) and 2 (changes) are success.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	working := env.Setting(WorkingVar, DefaultWorking)
	outputs := env.Setting(OutputsVar, DefaultOutputs)
	for _, dir := range []string{outputs, working} {
		if err := hooks.PrepareDir(dir); err != nil {
			return nil, err
		}
	}
	useHiera := d.OptionBool("enable_hiera", false)
	useFacter := d.OptionBool("enable_facter", true)

	// facts keeps the reference's dict order: fqdn, the inputs, then the
	// hook's own; a later value of a name keeps its first place.
	facts := jsondoc.NewObject(len(d.Inputs()) + 3)
	if fqdn := env.FQDN(ctx); fqdn != "" {
		facts.Set("FACTER_fqdn", fqdn)
	}
	hiera := jsondoc.NewObject(len(d.Inputs()))
	for _, in := range d.Inputs() {
		value := in.Value
		if !in.HasValue {
			value = ""
		}
		if useFacter {
			facts.Set("FACTER_"+in.Name, hooks.EnvValue(value))
		}
		if useHiera {
			hiera.Set(in.Name, value)
		}
	}
	if useHiera {
		if err := writeHiera(env, d.Name(), hiera); err != nil {
			return nil, err
		}
		facts.Set("FACTER_deploy_config_name", d.Name())
	}
	fn := pypath.Join(working, d.ID()+".pp")
	outputsPath := pypath.Join(outputs, d.ID())
	facts.Set("FACTER_heat_outputs_path", outputsPath)

	toolEnv := env.Environ
	var shown []string
	for i := 0; i < facts.Len(); i++ {
		k, v := facts.At(i)
		if err := hooks.CheckVariable(k, v.(string)); err != nil {
			return nil, err
		}
		toolEnv = environ.With(toolEnv, k, v.(string))
		shown = append(shown, k+`="`+hooks.LogValue(k, v.(string))+`" `)
	}
	if err := hooks.WriteFile(fn, []byte(d.ConfigString()), 0o700); err != nil {
		return nil, err
	}
	argv := command(env.Setting(CmdVar, DefaultCmd), d, fn)

	logDir := env.Setting(LogDirVar, DefaultLogDir)
	if err := hooks.PrepareDir(logDir); err != nil {
		return nil, err
	}
	base := pypath.Join(logDir, logStamp(d.CreationTime())+"-"+d.ID())
	log.Debug(fmt.Sprintf("Running %s %s", strings.Join(shown, " "), strings.Join(argv, " ")))
	out, err := runLogged(ctx, env, hooks.Tool{Argv: argv, Env: toolEnv, Dir: working}, base)
	if err != nil {
		return nil, err
	}
	if out.NotFound {
		log.Warn("puppet not installed yet")
	}
	log.Info(fmt.Sprintf("Return code %d", out.Status))

	res := jsondoc.NewObject(4)
	red := d.Redactor()
	for _, stream := range []string{"stdout", "stderr"} {
		content, dropped, err := hooks.ReadTail(base+"-"+stream+".log", hooks.MaxOutput)
		if err != nil {
			return nil, err
		}
		if dropped > 0 {
			log.Warn(fmt.Sprintf("%s printed %d bytes on %s; keeping the last %d", argv[0], dropped+hooks.MaxOutput, stream, hooks.MaxOutput))
		}
		if strings.TrimSpace(content) != "" {
			log.Info(red.Redact(content))
		}
		if stream == "stderr" {
			content = out.AppendNote(content)
		}
		res.Set("deploy_"+stream, content)
	}

	status := out.Status
	if status == 0 || status == 2 { // 2: changes were applied
		status = 0
		log.Info("Completed " + fn)
	} else {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", fn, out.Status))
	}
	hooks.ReadOutputs(res, d, outputsPath)
	res.Set("deploy_status_code", jsondoc.Int(int64(status)))
	return res, nil
}

// command is the reference's argv: the options go between
// --logdest console and the manifest, in this order.
func command(cmd string, d *deployment.Deployment, manifest string) []string {
	argv := []string{cmd, "apply", "--color", "false", "--detailed-exitcodes", "--logdest", "console"}
	if p := hooks.StringOption(d, "modulepath"); p != "" {
		argv = append(argv, "--modulepath", p)
	}
	if t := hooks.StringOption(d, "tags"); t != "" {
		argv = append(argv, "--tags", t)
	}
	if d.OptionBool("enable_debug", false) {
		argv = append(argv, "--debug", "--logdest", DebugLog)
	}
	if d.OptionBool("enable_verbose", false) {
		argv = append(argv, "--verbose", "--logdest", VerboseLog)
	}
	return append(argv, manifest)
}

// logStamp is creation_time made part of a file name: ':' and 'T' become
// '-' as in the reference; so do '/' and NUL, which would leave the log
// directory.
func logStamp(t string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ':', 'T', '/', 0:
			return '-'
		}
		return r
	}, t)
}

// writeHiera writes the inputs as heat_config_<name>.json in the hiera
// data directory: keyed by the deployment's name, so the latest
// deployment of a name is what hiera sees.
func writeHiera(env hooks.Env, name string, data *jsondoc.Object) error {
	if strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("deployment name %q cannot name a hiera data file", name)
	}
	dir := env.Setting(HieraDirVar, DefaultHiera)
	if err := hooks.PrepareDir(dir); err != nil {
		return err
	}
	return hooks.WriteFile(pypath.Join(dir, "heat_config_"+name+".json"), []byte(jsondoc.Dumps(data)), 0o600)
}

// runLogged runs puppet with its stdout and stderr in <base>-stdout.log
// and <base>-stderr.log (where operators look for them), truncated.
func runLogged(ctx context.Context, env hooks.Env, t hooks.Tool, base string) (hooks.Outcome, error) {
	stdout, err := os.OpenFile(base+"-stdout.log", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return hooks.Outcome{}, err
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(base+"-stderr.log", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return hooks.Outcome{}, err
	}
	defer stderr.Close()
	t.Stdout, t.Stderr = stdout, stderr
	return env.RunTool(ctx, t), nil
}
