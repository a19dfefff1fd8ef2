package heatconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pyutf8"
)

// Output bounds: a hook's result is one JSON object, normally small (the
// hooks keep the tail of their tools' output); past stdoutHead it cannot
// be parsed whole, and the tail is what is signalled. Heat accepts 1 MiB.
const (
	stdoutHead = 4 << 20
	outputTail = 512 << 10
	stderrHead = 64 << 10
)

// hookResult is how a hook ended, or why it could not run.
type hookResult struct {
	stdout, stderr []byte
	// code is the returncode (Python's: -n for signal n), or the status
	// we report for a hook that could not run or ran past its deadline.
	code int
	// truncated: stdout lost its middle, so it is not a result object.
	truncated bool
}

// noHook is the failure signalled for a group without a hook: the
// reference signalled nothing and Heat waited until the stack timed out.
func noHook(group string, dirs []string) hookResult {
	return hookResult{
		code:   127,
		stderr: []byte(fmt.Sprintf("heat-config: no hook for group %q: no file %q in %s\n", group, hookName(group), strings.Join(dirs, ", "))),
	}
}

// hookGrace is the grace a hook gives its tools past their deadline, as
// 55-heat-config gives the hook (proc's default unless a test sets it).
func (r *runner) hookGrace() time.Duration {
	if r.env.Grace > 0 {
		return r.env.Grace
	}
	return proc.DefaultGrace
}

func (r *runner) runHook(ctx context.Context, log *slog.Logger, d *deployment.Deployment, hook, statePath string) hookResult {
	log.Debug(fmt.Sprintf("Running %s < %s", hook, statePath))
	stdout, stderr := newStdoutCapture(), proc.NewCapture(stderrHead, outputTail)
	// The deployment is encoded as the hook reads it, never held whole;
	// a hook that exits before reading it all ends the encoding.
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(d.WriteJSON(pw)) }()
	defer pr.CloseWithError(io.ErrClosedPipe)
	res, err := proc.Run(ctx, proc.Spec{
		Path: hook, Args: []string{hook}, Env: r.env.Environ,
		Stdin:  pr,
		Stdout: stdout, Stderr: stderr,
		Timeout: deadline.Outer(r.config.hookTimeout, r.hookGrace()), Grace: r.env.Grace,
	})
	if err != nil {
		// Not executable, or gone: the reference logged a traceback and
		// never signalled.
		code := 126
		if errors.Is(err, fs.ErrNotExist) {
			code = 127
		}
		log.Error(fmt.Sprintf("Error running %s: %v", hook, err))
		return hookResult{code: code, stderr: []byte(fmt.Sprintf("heat-config: cannot run hook %s: %v\n", hook, err))}
	}
	out := hookResult{stderr: joined(stderr), code: res.Returncode()}
	out.stdout, out.truncated = stdout.result()
	if res.TimedOut {
		out.code = 124
		out.stderr = append(out.stderr, fmt.Sprintf("heat-config: hook %s timed out after %s and was stopped (%s)\n", hook, r.config.hookTimeout, res.Stopped)...)
	}
	r.logOutput(log, d, out)
	if out.code != 0 {
		log.Error(fmt.Sprintf("Error running %s. [%d]\n", hook, out.code))
	} else {
		log.Info("Completed " + hook)
	}
	return out
}

// logOutput logs the hook's stdout at INFO as readable YAML (the
// reference's was a base64 !!binary block) and its stderr at DEBUG,
// without the deployment's secrets. Under journald each line is an entry
// of its own, carrying the deployment's fields.
func (r *runner) logOutput(log *slog.Logger, d *deployment.Deployment, out hookResult) {
	red := d.Redactor()
	emit := func(level slog.Level, text string) {
		text = red.Redact(strings.TrimRight(text, "\n"))
		if text == "" {
			return
		}
		if !logging.IsJournal(log) {
			log.Log(context.Background(), level, text)
			return
		}
		for _, line := range strings.Split(text, "\n") {
			log.Log(context.Background(), level, line)
		}
	}
	if out.truncated {
		emit(slog.LevelInfo, pyutf8.DecodeReplace(out.stdout))
	} else {
		emit(slog.LevelInfo, humanize(out.stdout))
	}
	emit(slog.LevelDebug, pyutf8.DecodeReplace(out.stderr))
}

// signalData is what Heat is told, by the reference's rules: a hook's
// JSON object on stdout is the signal as it is, whatever its exit
// status; other output, or a failure without output, becomes
// deploy_stdout, deploy_stderr and deploy_status_code.
func (h hookResult) signalData() jsondoc.Value {
	if len(h.stdout) > 0 && !h.truncated {
		if v, err := jsondoc.Loads([]byte(pyutf8.DecodeReplace(h.stdout))); err == nil {
			if obj, ok := v.(*jsondoc.Object); ok {
				return obj
			}
		}
	}
	if len(h.stdout) == 0 && h.code == 0 {
		return jsondoc.NewObject(0)
	}
	obj := jsondoc.NewObject(3)
	obj.Set("deploy_stdout", pyutf8.DecodeReplace(h.stdout))
	obj.Set("deploy_stderr", pyutf8.DecodeReplace(h.stderr))
	obj.Set("deploy_status_code", jsondoc.Int(int64(h.code)))
	return obj
}
