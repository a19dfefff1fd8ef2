// Package hooks is the seam between heat-config and the programs that
// apply one software deployment each: a Hook is a group name and a
// function from a deployment to the JSON object heat-config signals to
// Heat. Main is every hook's process contract (the deployment as JSON on
// stdin, one JSON object on stdout, the log on stderr); the rest are the
// helpers the hooks share: settings from the environment, working
// directories, declared outputs, and running a tool under a deadline with
// bounded output. docs/hooks.md describes the hooks for operators.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
)

// Hook is one deployment group's hook, registered as data (hooks/all).
type Hook struct {
	// Group is the deployments' group, and the name of the hook's file in
	// heat-config's hooks directory.
	Group string
	// Summary says what the hook does, a phrase ("runs the config as a
	// script"), for its help and manual page.
	Summary string
	// IDOptional: the reference hook never reads the deployment's id, so
	// a deployment without one runs (ID is ""), as upstream's tests of
	// such hooks (cfn-init, docker-compose, json-file...) feed them.
	IDOptional bool
	// Run applies d and returns what heat-config signals: deploy_stdout,
	// deploy_stderr, deploy_status_code and the outputs produced. A tool's
	// failure is a result, not an error; an error means the hook itself
	// could not do its work (the reference crashed there), and makes the
	// process exit 1 with the error logged.
	Run func(ctx context.Context, d *deployment.Deployment, env Env) (*jsondoc.Object, error)
	// Scripts are the os-refresh-config scripts of the hook's element,
	// if any.
	Scripts []Script
}

// LoggerName is the reference hooks' Python logger name, in every line.
const LoggerName = "heat-config"

// maxStdin bounds the deployment read from stdin: heat-config hands over
// one deployment, which Heat keeps well under this; anything bigger is not
// one and must not exhaust the node's memory.
const maxStdin = 64 << 20

// Main runs h as the process heat-config starts: it reads the deployment
// from stdin, runs the hook and prints its result as Python's json.dump
// does (no newline after it). A document that is not a deployment is
// logged on one line and makes an exit status of 1, as the reference's
// crash did. args are ignored, as the reference hooks ignore theirs.
func Main(ctx context.Context, h Hook, args []string, env Env) error {
	if env.Log == nil {
		env.Log = logging.New(env.Stderr, logging.Options{
			Identifier: "heat-config-" + h.Group, Level: slog.LevelDebug,
			Prefix: logging.PythonPrefix(LoggerName), QuietAttrs: true,
		})
	}
	d, err := readDeployment(env.Stdin, h.IDOptional)
	if err != nil {
		env.Log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	res, err := h.Run(ctx, d, env)
	if err != nil {
		env.Log.Error(err.Error())
		return exitcode.With(exitcode.Failure, err)
	}
	if _, err := io.WriteString(env.Stdout, jsondoc.Dumps(res)); err != nil {
		return exitcode.With(exitcode.Failure, fmt.Errorf("writing the result: %w", err))
	}
	if ctx.Err() != nil {
		// Stopped from outside (the tool got SIGTERM too): the result
		// says what happened; the status says we were stopped.
		return exitcode.With(exitcode.Terminated, ctx.Err())
	}
	return nil
}

// readDeployment reads stdin as one deployment. A missing "inputs" counts
// as none: heat-config always sends it, and the hooks that ignore inputs
// (hiera, json-file, apply-config) were tested upstream without it.
func readDeployment(r io.Reader, idOptional bool) (*deployment.Deployment, error) {
	if r == nil {
		r = eofReader{}
	}
	data, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return nil, fmt.Errorf("reading the deployment from stdin: %w", err)
	}
	if len(data) > maxStdin {
		return nil, fmt.Errorf("%w: more than %d bytes on stdin", deployment.ErrInvalid, maxStdin)
	}
	v, err := jsondoc.LoadsBytes(data)
	if err != nil {
		return nil, fmt.Errorf("%w on stdin: %v", deployment.ErrInvalid, err)
	}
	if o, ok := v.(*jsondoc.Object); ok {
		if _, ok := o.Get("inputs"); !ok {
			o.Set("inputs", []jsondoc.Value{})
		}
	}
	from := deployment.FromValue
	if idOptional {
		from = deployment.FromValueWithoutID
	}
	d, err := from(v)
	if err != nil {
		return nil, fmt.Errorf("%w (on stdin)", err)
	}
	return d, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// ErrConfig marks a deployment whose config has a shape the hook cannot
// use (json-file and hiera want an object).
var ErrConfig = errors.New("unusable config")
