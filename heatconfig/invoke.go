package heatconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/deadline"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
	"github.com/tripleo-go/agent/internal/pyutf8"
	"github.com/tripleo-go/agent/signal/all"
)

// runner runs the deployments of one heat-config run.
type runner struct {
	config config
	env    Env
	log    *slog.Logger
}

// invoke runs the i-th item of the list, if it is a deployment that has
// not run yet. Nothing it meets stops the loop: a bad item is one error
// line naming it.
func (r *runner) invoke(ctx context.Context, i int, v jsondoc.Value) {
	d, err := deployment.FromValue(v)
	if err != nil {
		r.log.Error(fmt.Sprintf("Skipping deployment %d %s: %v", i, deployment.Label(v), err))
		return
	}
	d.CoerceStrings()
	log := r.log.With("deployment_id", d.ID(), "deployment_name", d.Name(), "deployment_group", d.Group())
	if d.Group() == "component" {
		action, ok := d.ResolveComponent()
		if !ok {
			log.Warn(fmt.Sprintf("Skipping group component, no valid script is defined for deploy action %s", action))
			return
		}
		if _, ok := d.Object().Get("group"); !ok || d.Group() == "" {
			log.Error(fmt.Sprintf("Skipping deployment %s: its component's tool is not a group name", deployment.Label(v)))
			return
		}
		log = log.With("deployment_group", d.Group())
	}
	statePath := r.config.deployed.State(d.ID())
	if r.config.deployed.Deployed(d.ID()) && r.config.deployed.Interrupted(d.ID()) {
		r.signalInterrupted(ctx, log, d, statePath)
		return
	}
	if r.config.deployed.Deployed(d.ID()) {
		log.Warn("Skipping config " + d.ID() + ", already deployed")
		log.Warn("To force-deploy, rm " + statePath)
		return
	}
	hook, found := findHook(r.config.hookDirs, d.Group())
	// os-apply-config's group has no hook on purpose (deployment.ApplyConfig).
	if !found && d.Group() == deployment.ApplyConfig {
		return
	}
	// The state file is written before the hook runs: a deployment is
	// attempted at most once per id, even if the hook fails or the node
	// goes down meanwhile. The in-flight marker, before it and removed
	// once the signal went, tells the next run that one did not finish.
	if err := r.config.deployed.ClaimFrom(d.ID(), d.WriteIndented); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// the marker is the concurrent run's to remove
			log.Warn("Skipping config " + d.ID() + ", already deployed by a concurrent run")
			return
		}
		log.Error(fmt.Sprintf("Skipping deployment %s: %v", deployment.Label(v), err))
		return
	}
	defer r.config.deployed.Finish(d.ID())
	var res hookResult
	if !found {
		// The reference's line said "with no hook script None".
		log.Error(fmt.Sprintf("No hook for group %s: no file %q in %s; deployment %s fails with status 127",
			d.Group(), hookName(d.Group()), strings.Join(r.config.hookDirs, ", "), d.ID()))
		res = noHook(d.Group(), r.config.hookDirs)
	} else {
		w := r.startWarmup(ctx, d)
		res = r.runHook(ctx, log, d, hook, statePath)
		w.finish(log, d.ID())
	}
	data := res.signalData()
	if ctx.Err() != nil {
		// Stopped (systemctl stop, a package upgrade) while the hook ran:
		// it is not run again (its state file exists), so tell Heat it
		// failed, quickly, before the stop's grace ends, rather than
		// leave the stack waiting for its timeout as the reference did.
		log.Warn(fmt.Sprintf("Stopped while %s ran: signalling it as failed", d.ID()))
		stop := deadline.StopNotify(deadline.StopGrace)
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stop.Run)
		defer cancel()
		r.notifyWith(stopCtx, log, d, statePath, data, stop.Run, deadline.NotifyRetryEntry(stop.Retry))
		return
	}
	r.notify(ctx, log, d, statePath, data)
}

// notify writes the signal data next to the state file and runs
// heat-config-notify with it.
func (r *runner) notify(ctx context.Context, log *slog.Logger, d *deployment.Deployment, statePath string, data jsondoc.Value) {
	r.notifyWith(ctx, log, d, statePath, data, deadline.NotifyRun)
}

func (r *runner) notifyWith(ctx context.Context, log *slog.Logger, d *deployment.Deployment, statePath string, data jsondoc.Value, timeout time.Duration, extraEnv ...string) {
	notifyPath := r.config.deployed.Notify(d.ID())
	if err := r.config.deployed.WriteNotify(d.ID(), []byte(jsondoc.DumpsIndent(data, 2))); err != nil {
		log.Warn(fmt.Sprintf("writing %s: %v", notifyPath, err))
	}
	log.Debug(fmt.Sprintf("Running %s %s < %s", r.config.notify, statePath, notifyPath))
	stdout, stderr := proc.NewCapture(stderrHead, outputTail), proc.NewCapture(stderrHead, outputTail)
	env := notifyEnviron(r.env)
	res, err := proc.Run(ctx, proc.Spec{
		Path: r.config.notify, Args: []string{r.config.notify, statePath}, Env: append(slices.Clip(env), extraEnv...),
		Stdin: strings.NewReader(jsondoc.Dumps(data)), Stdout: stdout, Stderr: stderr,
		Timeout: timeout, Grace: r.env.Grace,
	})
	status := statusOf(data)
	rec := agentstate.Signal{Version: agentstate.SchemaVersion, At: time.Now(), StatusCode: status, Transport: transportOf(d), Result: agentstate.SignalSent}
	defer func() {
		// For `tripleo-agent status`; a failure to write it must not
		// change what the deployment did.
		if werr := r.config.deployed.WriteSignal(d.ID(), rec); werr != nil {
			log.Warn(fmt.Sprintf("Could not write the signal record: %v", werr))
		}
	}()
	if err != nil {
		rec.Result, rec.NotifyExit = agentstate.SignalFailed, -1
		log.Error(fmt.Sprintf("Error running heat-config-notify: %v", err), "deployment_status_code", status)
		return
	}
	if rc := res.Returncode(); rc != 0 {
		rec.Result, rec.NotifyExit = agentstate.SignalFailed, rc
	}
	if out := strings.TrimRight(pyutf8.DecodeReplace(joined(stdout)), "\n"); out != "" {
		log.Info(out)
	}
	if rc := res.Returncode(); rc != 0 {
		log.Error(fmt.Sprintf("Error running heat-config-notify. [%d]\n", rc), "deployment_status_code", status)
		log.Error(strings.TrimRight(pyutf8.DecodeReplace(joined(stderr)), "\n"), "deployment_status_code", status)
		return
	}
	if s := strings.TrimRight(pyutf8.DecodeReplace(joined(stderr)), "\n"); s != "" {
		log.Debug(s)
	}
	// Journal only: the text log stays the reference's.
	log.Log(ctx, logging.LevelEvent, fmt.Sprintf("Signalled deployment %s, status %s", d.ID(), status), "deployment_status_code", status)
}

// transportOf is the deployment's signal transport, as Heat named it.
func transportOf(d *deployment.Deployment) string { return all.Transports.Name(d) }

// statusOf is deploy_status_code as Heat reads it ("0" when absent).
func statusOf(data jsondoc.Value) string {
	obj, _ := data.(*jsondoc.Object)
	v, ok := obj.Get("deploy_status_code")
	if !ok || v == nil || !jsondoc.PyTruthy(v) {
		return "0"
	}
	return jsondoc.PyStr(v)
}
