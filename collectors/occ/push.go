package occ

import (
	"context"
	"sync"

	"github.com/tripleo-go/agent/collectors"
)

// pushers runs the Listen of every built collector that can push
// (collectors.Pusher), once each: a pushed change wakes the daemon as a
// local file's change does. Their goroutines are owned by the daemon's
// context and waited for by stop, so a reload or a stop closes their
// connections before the daemon goes.
type pushers struct {
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started map[string]bool
	push    collectors.Push
}

func (r *runner) newPushers(ctx context.Context, wake chan struct{}) *pushers {
	ctx, cancel := context.WithCancel(ctx)
	return &pushers{ctx: ctx, cancel: cancel, started: map[string]bool{}, push: collectors.Push{
		Wake:    func() { wakeUp(wake) },
		Backoff: collectors.Seconds(r.cfg.PollingInterval),
		Rand:    r.env.rand,
		After:   r.env.after,
	}}
}

// build builds the configured collectors before the first pass, so one
// that pushes listens from the start and no pass waits on a socket of its
// own; one that cannot be built is left to its pass, which says why.
func (r *runner) build() {
	for _, name := range r.cfg.Collectors {
		if _, ok := r.instances[name]; ok {
			continue
		}
		if inst, err := r.cfg.Sources[name].New(r.cfg.Globals(), r.log.With("collector", name)); err == nil {
			r.instances[name] = inst
		}
	}
}

// start starts the listeners of collectors built since the last call (a
// collector is built on its first pass).
func (p *pushers) start(instances map[string]collectors.Collector) {
	for name, inst := range instances {
		l, ok := inst.(collectors.Pusher)
		if !ok || p.started[name] {
			continue
		}
		p.started[name] = true
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			l.Listen(p.ctx, p.push)
		}()
	}
}

func (p *pushers) stop() {
	p.cancel()
	p.wg.Wait()
}

// wakeUp asks for a pass now; a wake-up already pending stands for both.
func wakeUp(wake chan struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
