package heatconfig

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/signal/all"
)

// warmGrace is how long past the hook's end heat-config-notify waits for
// the token warm-up: an authentication takes 0.15 s on an idle lab,
// 0.44 s under load. A warm-up not done by then is cancelled, and
// heat-config-notify authenticates itself, as it did before warm-ups.
const warmGrace = 2 * time.Second

// warmup is a Keystone token being fetched, while a deployment's hook
// runs, into the token cache where its heat-config-notify will look:
// the first signal of a stack user then costs no authentication after
// the hook, on the deployment's critical path.
type warmup struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error // set before done closes
}

// startWarmup starts d's warm-up under ctx; nil when there is none (no
// token cache, or a signal that does not authenticate: CFN, TempURL, none).
func (r *runner) startWarmup(ctx context.Context, d *deployment.Deployment) *warmup {
	// The zero policy is heat-config-notify's: signal's defaults.
	work := all.Transports.Warmup(d, r.config.tokenCache, httpclient.Options{})
	if work == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &warmup{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = work(ctx)
	}()
	return w
}

// finish waits for the warm-up up to warmGrace, then cancels it and
// waits for it to end. What went wrong changes nothing (the signal will
// authenticate, and say what is wrong): one debug line, without secrets.
func (w *warmup) finish(log *slog.Logger, id string) {
	if w == nil {
		return
	}
	t := time.NewTimer(warmGrace)
	defer t.Stop()
	late := false
	select {
	case <-w.done:
	case <-t.C:
		late = true
	}
	w.cancel()
	<-w.done
	switch {
	case late:
		log.Debug(fmt.Sprintf("Keystone token for the signal of %s not ready %s after the hook: left to heat-config-notify", id, warmGrace))
	case w.err != nil:
		log.Debug(fmt.Sprintf("Keystone token for the signal of %s not fetched ahead: %v", id, w.err))
	}
}
