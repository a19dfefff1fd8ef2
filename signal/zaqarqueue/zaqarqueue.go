// Package zaqarqueue signals through a Zaqar queue (ZAQAR_SIGNAL): the
// deployment's stack user authenticates with Keystone and posts one
// message whose body is the signal data; Heat pops the queue while the
// deployment is in progress and takes the first message as the signal.
package zaqarqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/signal"
)

// Kind is a message posted to a queue that Heat pops.
const Kind signal.Kind = "ZAQAR_SIGNAL"

// Transport is the Zaqar way out: a deployment with a deploy_queue_id
// (and the stack user's credentials).
var Transport = signal.Transport{Claims: claims, Build: build}

func claims(d *deployment.Deployment) bool {
	_, ok := d.Input("deploy_queue_id")
	return ok
}

func build(d *deployment.Deployment) (signal.Sender, error) {
	session, region, err := signal.StackUser(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Kind, err)
	}
	name, err := signal.StringInput(d, "deploy_queue_id")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Kind, err)
	}
	session.Needs = []keystone.Service{{Type: "messaging", Region: region}}
	return &queue{session: session, region: region, name: name}, nil
}

// TTL is how long the message waits for Heat, as the reference.
const TTL = 600 * time.Second

// MaxPost is Zaqar's default max_messages_post_size: the whole request
// body of a post, beyond which it answers 400.
const MaxPost = 262144

// envelope is what the post adds around the signal data.
const envelope = len(`{"messages": [{"body": , "ttl": 600}]}`)

// queue is a signal to a deployment's queue, as its stack user.
type queue struct {
	session      *keystone.Session
	region, name string
}

func (*queue) Kind() signal.Kind { return Kind }

// Limit keeps the post within Zaqar's default limit (the reference sent
// the data whole, and a big one was refused).
func (*queue) Limit() int { return MaxPost - envelope }

func (q *queue) Secrets() []string { return []string{q.session.Creds.Password.Reveal()} }

// Send posts r.Body to the queue. A token refused once is replaced; a
// cached catalog whose endpoint is gone is replaced once
// (Request.AuthenticatedSend).
func (q *queue) Send(ctx context.Context, r *signal.Request) error {
	r.Log.Debug("Signaling to queue " + q.name)
	zq := &zaqar.Queue{Session: q.session, Name: q.name, Region: q.region, Client: r.HTTP, Log: r.Log}
	if err := r.AuthenticatedSend(ctx, q.session, func(ctx context.Context) error { return zq.Post(ctx, r.Body, TTL) }); err != nil {
		return err
	}
	r.Log.Debug("Posted the signal to queue " + q.name)
	return nil
}

// Session is the stack user's Keystone session (a signal.Authenticator:
// its token can be fetched while the hook runs).
func (q *queue) Session() *keystone.Session { return q.session }
