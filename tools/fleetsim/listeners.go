package main

// The zaqar-push-probes variant: the fleet's size is the Zaqar model's
// (every queue subscribed by a socket of its own, each authenticated
// with Keystone as a node does, pushed to at every change), but only a
// few of the nodes are whole daemons. The others hold the daemon's own
// subscription (internal/openstack/zaqar, the code the collector keeps
// its socket with) and note when each push arrives, without the pass
// that a node runs on its own CPU. On this machine 10,000 whole
// daemons woken at once queue for 2 cores (about 6 ms of CPU a pass:
// 30 s of the machine for one change), which measures the simulator,
// not what a node sees; the probes measure the undercloud's side at
// the fleet's size and the node's side on an idle CPU.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	zaqarcol "github.com/tripleo-go/agent/collectors/zaqar"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/internal/secret"
	"github.com/tripleo-go/agent/internal/testkit/fleet"
	"github.com/tripleo-go/agent/internal/testkit/fleet/model"
	"github.com/tripleo-go/agent/internal/testkit/fleet/zaqarmodel"
)

// defaultProbes is how many whole daemons the probes variant runs.
const defaultProbes = 50

// listeners are the subscribed sockets of queues [from, to).
type listeners struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	pushes []fleet.Run // Agent is the queue's index; At the push's arrival
}

// startListeners subscribes a socket to each of queues [from, to) of the
// model at authURL; each retries with the daemon's backoff when its
// subscription fails or drops, until stop.
func startListeners(ctx context.Context, authURL string, from, to int) (*listeners, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &listeners{cancel: cancel}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := from; i < to; i++ {
		client, err := httpclient.New(httpclient.Options{Timeout: 30 * time.Second})
		if err != nil {
			cancel()
			return nil, err
		}
		q := &zaqar.Queue{Name: zaqarmodel.QueueName(i), Client: client, Log: quiet,
			Session: &keystone.Session{HTTP: client.Standard(), Creds: keystone.Credentials{AuthURL: authURL,
				UserID: zaqarmodel.UserID, ProjectID: zaqarmodel.ProjectID, Password: secret.String(zaqarmodel.Password)}}}
		l.wg.Go(func() { l.listen(ctx, i, q) })
	}
	return l, nil
}

func (l *listeners) listen(ctx context.Context, i int, q *zaqar.Queue) {
	notify := func(body json.RawMessage) {
		at := time.Now()
		l.mu.Lock()
		l.pushes = append(l.pushes, fleet.Run{Agent: i, At: at, Version: model.Version(body)})
		l.mu.Unlock()
	}
	for failures := 0; ctx.Err() == nil; {
		sub, err := q.Subscribe(ctx, time.Hour, notify)
		if err == nil {
			failures = 0
			select {
			case <-ctx.Done():
			case <-sub.Done():
			}
			sub.Close()
			continue
		}
		failures++
		select {
		case <-ctx.Done():
		case <-time.After(zaqarcol.Backoff(failures, 30*time.Second, rand.Float64)):
		}
	}
}

// stop closes every socket and returns the pushes received; it may be
// called again.
func (l *listeners) stop() []fleet.Run {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pushes
}
