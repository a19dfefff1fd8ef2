package occ

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/exitcode"
)

// once is a one-time run: one pass, exiting with the command's status.
func (r *runner) once(ctx context.Context) error {
	status, _, err := r.pass(ctx)
	if err != nil {
		return err
	}
	if status != 0 {
		// A command killed by signal n: -n, which exits as 256-n, as the
		// reference's sys.exit of Python's returncode.
		return exitcode.With(status&0xff, fmt.Errorf("command exited %d", status))
	}
	return nil
}

// daemon runs passes until ctx ends, sleeping as its schedule says: from
// min-polling-interval doubling up to polling-interval, as the reference
// does, back to the minimum after a change, and with jitter.
func (r *runner) daemon(ctx context.Context) error {
	defer r.env.Notify.Stopping()
	sched := newSchedule(collectors.Seconds(r.cfg.MinPollingInterval), collectors.Seconds(r.cfg.PollingInterval),
		r.cfg.Jitter, r.env.rand)
	// One wake-up channel for every source that can say it changed: a
	// watched local file, a collector that pushes.
	wake := make(chan struct{}, 1)
	if w := watchSources(ctx, r.cfg, r.log, wake); w != nil {
		defer w.stop()
	}
	push := r.newPushers(ctx, wake)
	defer push.stop()
	r.build()
	push.start(r.instances)
	for ready := false; ; ready = true {
		status, changed, err := r.pass(ctx)
		if err != nil {
			return err
		}
		push.start(r.instances)
		// The daemon sleeps most of its life: hand the pass's garbage back
		// to the kernel now rather than keep it resident until the
		// scavenger gets to it (one collection per pass, well under a
		// millisecond for this heap).
		if r.env.ReturnMemory {
			debug.FreeOSMemory()
		}
		if !ready && r.env.Settle != nil {
			r.env.Settle()
		}
		line := fmt.Sprintf("last pass %s: command exit %d", time.Now().Format(time.RFC3339), status)
		if !ready {
			r.env.Notify.Ready(line)
		} else {
			r.env.Notify.Status(line)
		}
		// Stopped during the pass (its command was stopped): stop, even
		// when the pass rewrote the configuration, which would otherwise
		// re-execute a daemon that systemd is waiting for to exit.
		if ctx.Err() != nil {
			return exitcode.With(exitcode.Terminated, ctx.Err())
		}
		// Unlike the reference (after a command only), every pass checks
		// whether the configuration changed.
		if r.configChanged() {
			push.stop() // the re-execution would not run the defers
			return r.reload("Configuration changed")
		}
		// After a change, poll soon again (the reference's help text
		// promised this; its loop never did it).
		wait := sched.sleep(changed, r.env.now())
		// The reference's line, at INFO, which its default level hides.
		// After a pass with a source unavailable it is a WARNING, so the
		// backoff shows beside "Source [X] Unavailable.".
		sleeping := fmt.Sprintf("Sleeping %.2f seconds.", wait.Seconds())
		if r.unavailable > 0 {
			r.log.Warn(sleeping)
		} else {
			r.log.Info(sleeping)
		}
		hup, err := r.sleep(ctx, wait, wake)
		if hup && r.configValid() {
			push.stop()
			return r.reload("SIGHUP received")
		}
		if err != nil {
			return exitcode.With(exitcode.Terminated, err)
		}
	}
}

// sleep waits for d, or less if a source says it changed (wake) or SIGHUP
// arrives, which it reports; ctx's end is its error. It waits in slices no
// longer than the watchdog interval, pinging between them from this loop,
// so a stuck loop is what the watchdog sees.
func (r *runner) sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) (hup bool, err error) {
	for left := d; ; {
		slice := left
		if w := r.env.Notify.WatchdogInterval(); w > 0 && slice > w {
			slice = w
		}
		r.env.Notify.Ping()
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-r.env.Hangup: // a nil channel never delivers
			return true, nil
		case <-wake:
			r.log.Debug("A source changed: collecting now.")
			return false, nil
		case <-r.env.after(slice):
		}
		if slice >= left {
			return false, nil
		}
		left -= slice
	}
}
