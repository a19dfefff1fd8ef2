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
//
// The sockets live in a process of their own at a lower priority (nice
// 10): each stands for a node with its own CPU, and 10,000 of them
// reading their pushes at once would otherwise take the 2 cores from
// the model and from the probes, which are what is measured. Their
// pushes' arrival times are the nice process's, late when the cores
// are busy: they are a count, not the figure.

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
	"github.com/tripleo-go/agent/test/fleet"
	"github.com/tripleo-go/agent/test/fleet/model"
	"github.com/tripleo-go/agent/test/fleet/zaqarmodel"
)

// defaultProbes is how many whole daemons the probes variant runs.
const defaultProbes = 50

// listeners are the subscribed sockets of queues [from, to), in this
// process (the listen mode's).
type listeners struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	received func(fleet.Run) // Agent is the queue's index; At the push's arrival
}

// startListeners subscribes a socket to each of queues [from, to) of the
// model at authURL; each retries with the daemon's backoff when its
// subscription fails or drops, until stop. Each push is handed to
// received.
func startListeners(ctx context.Context, authURL string, from, to int, received func(fleet.Run)) (*listeners, error) {
	ctx, cancel := context.WithCancel(ctx)
	l := &listeners{cancel: cancel, received: received}
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
		l.received(fleet.Run{Agent: i, At: time.Now(), Version: model.Version(body)})
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

// stop closes every socket and waits for their goroutines.
func (l *listeners) stop() {
	l.cancel()
	l.wg.Wait()
}
