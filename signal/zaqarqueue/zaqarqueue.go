// Package zaqarqueue signals through a Zaqar queue (ZAQAR_SIGNAL): the
// deployment's stack user authenticates with Keystone and posts one
// message whose body is the signal data; Heat pops the queue while the
// deployment is in progress and takes the first message as the signal.
package zaqarqueue

import (
	"context"
	"time"

	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/signal"
)

// TTL is how long the message waits for Heat, as the reference.
const TTL = 600 * time.Second

// MaxPost is Zaqar's default max_messages_post_size: the whole request
// body of a post, beyond which it answers 400.
const MaxPost = 262144

// envelope is what the post adds around the signal data.
const envelope = len(`{"messages": [{"body": , "ttl": 600}]}`)

// Transport is the Zaqar way out.
type Transport struct{}

// Limit keeps the post within Zaqar's default limit (the reference sent
// the data whole, and a big one was refused).
func (Transport) Limit() int { return MaxPost - envelope }

// Send posts r.Body to the queue r.Queue.
func (Transport) Send(ctx context.Context, r *signal.Request) error {
	r.Log.Debug("Signaling to queue " + r.Queue)
	if err := r.Authenticate(ctx); err != nil {
		return err
	}
	q := &zaqar.Queue{Session: r.Keystone, Name: r.Queue, Region: r.Region, Client: r.HTTP, Log: r.Log}
	if err := q.Post(ctx, r.Body, TTL); err != nil {
		return err
	}
	r.Log.Debug("Posted the signal to queue " + r.Queue)
	return nil
}
