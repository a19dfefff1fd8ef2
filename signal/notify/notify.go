// Package notify is heat-config-notify: given a deployment's state file
// and the hook's result on stdin, it signals the result to Heat the way
// the deployment's inputs say. Its command line, stdin handling and log
// lines are the reference's; unlike it, it retries every transient
// failure within a time budget and exits 1 when the signal did not get
// through, saying why in one line.
package notify

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/all"
)

// Name is the program's name, in its log lines.
const Name = "heat-config-notify"

const usage = "Usage:\n  heat-config-notify /path/to/config.json < /path/to/signal_data.json"

// Env is the world the program runs in.
type Env struct {
	Stdin   io.Reader
	Stderr  io.Writer
	Environ []string
	// Now is the clock of the log lines; nil means time.Now.
	Now func() time.Time
	// TokenCache is the Keystone token cache when the environment
	// names none (signal.TokenCacheVar); "" keeps none.
	TokenCache string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdin: os.Stdin, Stderr: os.Stderr, Environ: os.Environ(), TokenCache: signal.DefaultTokenCache}
}

// Run runs heat-config-notify with args (the arguments after the
// program's name): args[0] is the deployment file; more are ignored, as
// the reference did.
func Run(ctx context.Context, args []string, env Env) error {
	log := logging.New(env.Stderr, logging.Options{Identifier: Name, Prefix: logging.PythonPrefix(Name),
		Level: slog.LevelDebug, Now: env.Now, QuietAttrs: true})
	if len(args) < 1 {
		log.Error(usage)
		return exitcode.With(exitcode.Failure, nil)
	}
	data := readSignalData(env.Stdin, log)
	path := args[0]
	if _, err := os.Stat(path); err != nil {
		log.Error("No config file " + path)
		log.Error(usage)
		return exitcode.With(exitcode.Failure, nil)
	}
	d, err := deployment.Load(path)
	if err != nil {
		log.Error(fmt.Sprintf("Cannot read config file: %v", err))
		return exitcode.With(exitcode.Failure, err)
	}
	o := signal.Options{Log: log, Budget: budget(env, log), BudgetName: deadline.NotifyRetryVar, Transports: all.Transports,
		TokenCache: signal.TokenCacheDir(env.Environ, env.TokenCache)}
	kinds, err := signal.Send(ctx, d, data, o)
	if err == nil {
		return nil
	}
	if signal.LogFailures(log, Name, err, "deployment", d.ID(), "transports", fmt.Sprint(kinds)) {
		return exitcode.With(exitcode.Terminated, err)
	}
	return exitcode.With(exitcode.Failure, err)
}

// readSignalData reads the hook's result: anything but JSON is {}, with
// the reference's warning.
func readSignalData(stdin io.Reader, log *slog.Logger) jsondoc.Value {
	var raw []byte
	var err error
	if stdin != nil {
		raw, err = readAll(stdin)
	}
	if err == nil && stdin != nil {
		// raw is the document's: its strings share it
		if v, err := jsondoc.LoadsOwned(raw); err == nil {
			return v
		}
	}
	log.Warn("No valid json found on stdin")
	return jsondoc.NewObject(0)
}

// readAll is io.ReadAll, but a regular file is read into a buffer of its
// size: a 100 MB result costs 100 MB, not the doublings up to it.
func readAll(r io.Reader) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			buf := make([]byte, 0, st.Size()+512)
			for {
				n, err := f.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return nil, err
				}
				if len(buf) == cap(buf) { // it grew meanwhile
					buf = append(buf, 0)[:len(buf)]
				}
			}
		}
	}
	return io.ReadAll(r)
}

// budget is the retry budget from the environment, as signal.Options
// takes it.
func budget(env Env, log *slog.Logger) time.Duration {
	d, err := deadline.NotifyRetry(env.Environ)
	switch {
	case err != nil:
		log.Warn(fmt.Sprintf("Ignoring %v; retrying for %s", err, d))
	case d == 0:
		return -1 // no retries
	}
	return d
}
