// Package salt is the hook of group "salt": the config is a salt state
// (SLS), applied by `salt-call --local state.sls` with the inputs as
// minion options (opts['<name>'] in the state's templates).
//
// The reference drove salt's Python API in its own process; salt is a
// Python program, so we run its CLI with the same options instead
// (docs/compat.md), and turn its JSON answer into the reference's result.
package salt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/hooks"
	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pypath"
	"github.com/tripleo-go/agent/internal/pyyaml"
)

// Hook is the salt hook.
var Hook = hooks.Hook{Group: "salt", Summary: "applies the config as a salt state with salt-call --local", Run: Run}

// Settings, with their defaults.
const (
	WorkingVar          = "HEAT_SALT_WORKING"
	MinionConfigVar     = "SALT_MINION_CONFIG"
	CmdVar              = "HEAT_SALT_CMD"
	DefaultWorking      = "/var/lib/heat-config/heat-config-salt"
	DefaultMinionConfig = "/etc/salt/minion"
	DefaultCmd          = "salt-call"
)

// maxResult bounds the JSON answer read back (Heat takes 1 MiB of
// signal; this leaves room for a YAML rendering that is bigger).
const maxResult = 16 << 20

// Run writes <working>/<id>.sls (the state) and <working>/<id>.opts (the
// inputs, as minion options) and applies the state.
func Run(ctx context.Context, d *deployment.Deployment, env hooks.Env) (*jsondoc.Object, error) {
	log := env.Logger()
	working := env.Setting(WorkingVar, DefaultWorking)
	if err := hooks.PrepareDir(working); err != nil {
		return nil, err
	}
	minion := env.Setting(MinionConfigVar, DefaultMinionConfig)

	opts := jsondoc.NewObject(len(d.Inputs()))
	for _, in := range d.Inputs() {
		if in.HasValue {
			opts.Set(in.Name, in.Value)
		} else {
			opts.Set(in.Name, "")
		}
	}
	stateFile := d.ID() + ".sls"
	fn := pypath.Join(working, stateFile)
	if err := hooks.WriteFile(fn, []byte(stateText(d.Config())), 0o700); err != nil {
		return nil, err
	}
	optsFile := pypath.Join(working, d.ID()+".opts")
	if err := hooks.WriteFile(optsFile, []byte(pyyaml.Dump(opts)), 0o600); err != nil {
		return nil, err
	}
	outFile := pypath.Join(working, d.ID()+".out.json")
	if err := os.Remove(outFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err // an earlier answer must not pass for this one
	}
	argv := Command(env.Setting(CmdVar, DefaultCmd), minion, working, d.ID(), optsFile, outFile)

	log.Debug("Applying Salt state " + stateFile)
	out := env.RunTool(ctx, hooks.Tool{Argv: argv, Env: environ.With(env.Environ, MinionConfigVar, minion), Dir: working})
	ret, ok := readAnswer(env, outFile)
	res := jsondoc.NewObject(len(d.Outputs()) + 3)
	if !ok {
		// No answer: salt-call stopped before the state ran (a bad
		// option, a missing SLS, a crash, the deadline), or is not
		// there. The reference crashed here; we say what salt-call said.
		// Its log line had "sate" for "state".
		if out.NotFound {
			log.Error(argv[0] + " is not installed: Salt state " + stateFile + " not applied")
		} else {
			log.Error("Salt invocation error while applying Salt state " + stateFile)
		}
		status := out.Status
		if status == 0 {
			status = 1
		}
		for _, o := range d.Outputs() {
			res.Set(o.Name, nil)
		}
		res.Set("deploy_stdout", out.Stdout)
		res.Set("deploy_stderr", out.Stderr)
		res.Set("deploy_status_code", jsondoc.Int(int64(status)))
		return res, nil
	}

	red := d.Redactor()
	status := out.Status
	log.Info("Results: " + red.Redact(jsondoc.PyRepr(answerRepr(ret, status))))
	output := pyyaml.Dump(ret)
	var stdout, stderr jsondoc.Value
	switch {
	case status == 0:
		log.Info("Completed applying salt state " + stateFile)
		stdout = output
	case failed(ret):
		log.Error(fmt.Sprintf("Error applying Salt state %s. [%d]\n", stateFile, status))
		stderr = output
	default:
		// salt's status is not always right: no state failed.
		status = 0
		stdout = output
	}
	for _, o := range d.Outputs() {
		res.Set(o.Name, callerField(o.Name, ret, status, d.ID()))
	}
	res.Set("deploy_stdout", stdout)
	res.Set("deploy_stderr", stderr)
	res.Set("deploy_status_code", jsondoc.Int(int64(status)))
	return res, nil
}

// Command is salt-call's command line: masterless, the minion's own
// configuration directory, the working directory as the file root, the
// state of the deployment's id, the inputs loaded on top of the minion's
// options, the status of the state run as the exit status, the answer as
// JSON in outFile.
func Command(cmd, minionConfig, working, id, optsFile, outFile string) []string {
	return []string{cmd, "--local", "--config-dir", dirname(minionConfig), "--file-root", working,
		"--retcode-passthrough", "--out", "json", "--out-file", outFile,
		"state.sls", id, "localconfig=" + optsFile}
}

// stateText is the SLS file: a string config as it is, structured data
// as YAML (the reference's yaml.safe_dump), null as nothing.
func stateText(config jsondoc.Value) string {
	switch c := config.(type) {
	case nil:
		return ""
	case string:
		return c
	default:
		return pyyaml.Dump(c)
	}
}

// readAnswer is what salt-call returned ({"local": <return>}), and
// whether there was one.
func readAnswer(env hooks.Env, path string) (jsondoc.Value, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b := make([]byte, maxResult+1)
	n, _ := io.ReadFull(f, b)
	if n > maxResult {
		env.Logger().Warn(fmt.Sprintf("%s: more than %d bytes; not read", path, maxResult))
		return nil, false
	}
	v, err := jsondoc.LoadsBytes(b[:n])
	if err != nil {
		env.Logger().Warn(fmt.Sprintf("%s: %v", path, err))
		return nil, false
	}
	o, ok := v.(*jsondoc.Object)
	if !ok {
		return nil, false
	}
	return o.Get("local")
}

// failed applies the reference's rule to a run salt did not call clean:
// a state whose result is false (or null: a test run) failed it. A
// return that is no mapping of states (salt's list of render errors)
// failed too.
func failed(ret jsondoc.Value) bool {
	states, ok := ret.(*jsondoc.Object)
	if !ok {
		return true
	}
	for i := 0; i < states.Len(); i++ {
		_, v := states.At(i)
		st, ok := v.(*jsondoc.Object)
		if !ok {
			return true
		}
		if r, _ := st.Get("result"); !jsondoc.PyTruthy(r) {
			return true
		}
	}
	return false
}

// answerRepr is the part of salt's caller return we know (the reference
// logged all of it).
func answerRepr(ret jsondoc.Value, status int) *jsondoc.Object {
	o := jsondoc.NewObject(2)
	o.Set("return", ret)
	o.Set("retcode", jsondoc.Int(int64(status)))
	return o
}

// callerField is the reference's output value: the field of salt's
// caller return named like the output; the job's id and the minion's
// are not in salt-call's JSON, and are null.
func callerField(name string, ret jsondoc.Value, status int, id string) jsondoc.Value {
	switch name {
	case "return":
		return ret
	case "retcode":
		return jsondoc.Int(int64(status))
	case "fun":
		return "state.sls"
	case "fun_args":
		return []jsondoc.Value{id}
	case "out":
		return "highstate"
	}
	return nil
}

// dirname is Python's os.path.dirname, "." for a bare name.
func dirname(p string) string {
	i := strings.LastIndex(p, "/") + 1
	head := p[:i]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	if head == "" {
		return "."
	}
	return head
}
