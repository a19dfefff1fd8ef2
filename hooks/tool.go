package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pyerr"
	"github.com/tripleo-go/agent/internal/pypath"
)

// MaxOutput is how much of each of a tool's stdout and stderr a hook
// keeps: the end, where the errors are. Heat takes a signal of 1 MiB at
// most anyway (heat-config-notify trims both to fit), a tool printing
// without end must not grow the hook, and the result must stay well
// inside what 55-heat-config reads whole as JSON (4 MiB).
const MaxOutput = 512 << 10

// Statuses a hook reports for a tool that has no exit status of its own,
// as a shell would (and timeout(1) for the deadline).
const (
	StatusTimedOut    = exitcode.TimedOut
	StatusNotFound    = 127
	StatusCannotRun   = 126
	StatusTerminated  = exitcode.Terminated
	defaultSearchPath = "/bin:/usr/bin" // Python's os.defpath, when PATH is unset
)

// Tool is one run of a hook's tool.
type Tool struct {
	// Argv is the command line. Argv[0] is looked up in the PATH of Env,
	// as Python's subprocess does, unless it holds a slash.
	Argv []string
	// Env is the tool's environment; nil means the hook's.
	Env []string
	// Dir is the tool's working directory; "" means the hook's.
	Dir string
	// Stdout and Stderr, when set, receive the tool's output directly (the
	// puppet hook's log files); else the end of each is captured.
	Stdout, Stderr *os.File
}

// Outcome is how a tool's run ended, ready for a hook's result.
type Outcome struct {
	// Stdout and Stderr are the end of what the tool printed, decoded as
	// Python's errors='replace' does; Stderr ends with Note, if any.
	Stdout, Stderr string
	// RawStdout and RawStderr are the same bytes undecoded (the reference
	// logs them as Python bytes).
	RawStdout, RawStderr []byte
	// Status is deploy_status_code: the exit status (minus the signal
	// that killed it, as Python reports), or one of the Status constants.
	Status int
	// Ran: the tool was started. NotFound: no such command. TimedOut:
	// stopped at the deadline. Terminated: stopped because the hook was.
	Ran, NotFound, TimedOut, Terminated bool
	// Note is the line added to deploy_stderr when the tool did not run
	// to its own end: why (not found, could not run, timed out, stopped).
	Note string
}

// AppendNote is stderr with the outcome's note, if any, on a line of its
// own after it.
func (o Outcome) AppendNote(stderr string) string {
	if o.Note == "" {
		return stderr
	}
	if stderr != "" && !strings.HasSuffix(stderr, "\n") {
		stderr += "\n"
	}
	return stderr + o.Note
}

// RunTool runs t through internal/proc under the hook's deadline
// (Timeout): past it the tool and its descendants get SIGTERM, then
// SIGKILL after the grace, and the status is 124. A command that cannot
// be found is status 127, one that cannot be executed 126, each with a
// note saying so: the reference exited without a result there, which Heat
// took for success.
func (env Env) RunTool(ctx context.Context, t Tool) Outcome {
	toolEnv := t.Env
	if toolEnv == nil {
		toolEnv = env.Environ
	}
	name := t.Argv[0]
	path, ok := lookPath(name, toolEnv, t.Dir)
	if !ok {
		o := Outcome{Status: StatusNotFound, NotFound: true, Note: name + ": command not found"}
		o.Stderr = o.Note
		return o
	}
	timeout, err := env.Timeout()
	if err != nil {
		env.Logger().Error(err.Error())
		o := Outcome{Status: exitcode.Failure, Note: name + " was not run: " + err.Error()}
		o.Stderr = o.Note
		return o
	}
	spec := proc.Spec{Path: path, Args: t.Argv, Env: toolEnv, Dir: t.Dir, Timeout: timeout, Grace: env.Grace}
	var capOut, capErr *proc.Capture
	if t.Stdout != nil {
		spec.Stdout = t.Stdout
	} else {
		capOut = proc.NewCapture(0, MaxOutput)
		spec.Stdout = capOut
	}
	if t.Stderr != nil {
		spec.Stderr = t.Stderr
	} else {
		capErr = proc.NewCapture(0, MaxOutput)
		spec.Stderr = capErr
	}
	var o Outcome
	if err := ctx.Err(); err != nil {
		o = Outcome{Status: StatusTerminated, Terminated: true, Note: name + " was not run: the hook was stopped"}
	} else if p, err := proc.Start(spec); err != nil {
		o = Outcome{Status: StatusCannotRun, Note: pyerr.ErrorString(err, path)}
		if errors.Is(err, fs.ErrNotExist) {
			o.Status, o.NotFound = StatusNotFound, true
		}
	} else {
		o.Ran = true
		res, err := p.Wait(ctx)
		if err != nil {
			env.Logger().Warn(fmt.Sprintf("%s: %v", name, err))
		}
		switch {
		case res.TimedOut:
			o.Status, o.TimedOut = StatusTimedOut, true
			o.Note = fmt.Sprintf("%s timed out after %s seconds (%s) and was stopped", name, formatSeconds(spec.Timeout), TimeoutVar)
		case res.Stopped != 0:
			o.Status, o.Terminated = StatusTerminated, true
			o.Note = name + " was stopped: the hook was stopped"
		default:
			o.Status = res.Returncode()
		}
	}
	o.RawStdout, o.Stdout = env.tail(name, "stdout", capOut)
	o.RawStderr, o.Stderr = env.tail(name, "stderr", capErr)
	o.Stderr = o.AppendNote(o.Stderr)
	return o
}

// tail is what a capture kept, raw and decoded, with a warning when the
// start of the stream was dropped.
func (env Env) tail(name, stream string, c *proc.Capture) ([]byte, string) {
	if c == nil {
		return nil, ""
	}
	b := c.Bytes()
	if c.Dropped() > 0 {
		env.Logger().Warn(fmt.Sprintf("%s printed %d bytes on %s; keeping the last %d", name, c.Len(), stream, len(b)))
	}
	return b, decodeTail(b, c.Dropped() > 0)
}

// lookPath finds name as Python's subprocess does with env as the
// child's environment: a name with a slash as it is, else the first
// executable file of that name in env's PATH (os.defpath when unset; an
// empty entry is the working directory).
func lookPath(name string, env []string, dir string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, true
	}
	if name == "" {
		return "", false
	}
	search, ok := environ.Lookup(env, "PATH")
	if !ok {
		search = defaultSearchPath
	}
	for _, d := range strings.Split(search, ":") {
		cand := pypath.Join(d, name)
		if d == "" {
			cand = "./" + name
		}
		check := cand
		if !filepath.IsAbs(check) && dir != "" {
			check = filepath.Join(dir, check)
		}
		if fi, err := os.Stat(check); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, true
		}
	}
	return "", false
}

// Installed says whether name (a path, or a program looked up in env's
// PATH as a tool is) can be run.
func Installed(env Env, name string) bool {
	_, ok := lookPath(name, env.Environ, "")
	return ok
}
