// Package zaqar is a client of one Zaqar queue, reached through the
// Keystone catalog: it pops every pending message (HTTP API v2, after a
// listing shows there is one; or a websocket that can also wait for the
// next one), as the zaqar collector needs, and posts a message (API
// v1.1), as a signal to Heat does.
package zaqar

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/secret"
)

// popBatch is how many messages one request pops (Zaqar's maximum).
const popBatch = 20

// maxBatches bounds one pop: at most 1000 messages.
const maxBatches = 50

// Queue is one queue of the session's project.
type Queue struct {
	Session *keystone.Session
	Name    string
	Region  string
	// Client makes the HTTP requests. It should not retry: a pop whose
	// answer was lost has consumed the messages anyway.
	Client *httpclient.Client
	// TLS is the websocket's TLS configuration (nil: the system's).
	TLS *tls.Config
	// Log reports messages that are skipped because they cannot be read.
	Log *slog.Logger
	// MaxFrame caps what a websocket frame may hold, as the Client caps
	// a body (httpclient.DefaultMaxBody when zero).
	MaxFrame int64
	// MaxFrameOption names the option that sets MaxFrame, in the error
	// of a frame over it.
	MaxFrameOption string
	// PingEvery and PongWait are a kept websocket's liveness check: a
	// ping every PingEvery, answered within PongWait (DefaultPingEvery
	// and DefaultPongWait when zero).
	PingEvery, PongWait time.Duration
	// Superseded, when set, sees the body of each message a pop took
	// that a newer one in the same pop supersedes: the pops return only
	// the newest, and a late notification of an older one is old news.
	Superseded func(body json.RawMessage)

	once     sync.Once
	clientID string
}

// ClientID is the random id this queue client sends with every request,
// the same for its whole life.
func (q *Queue) ClientID() string {
	q.once.Do(func() { q.clientID = uuid4() })
	return q.clientID
}

// message is one popped message; Body keeps its key order.
type message struct {
	Age  float64         `json:"age"` // seconds; fractional with some stores
	Body json.RawMessage `json:"body"`
}

// PopNewest pops every pending message, in batches, and returns the body
// of the newest; nil when the queue was empty.
func (q *Queue) PopNewest(ctx context.Context) (json.RawMessage, error) {
	if _, err := q.Session.Client(ctx); err != nil {
		return nil, err
	}
	endpoint, err := q.Session.Endpoint("messaging", q.Region)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(endpoint, "/") + "/v2/queues/" + q.Name + "/messages"
	if empty, err := q.empty(ctx, base); err != nil || empty {
		return nil, err
	}
	url := base + fmt.Sprintf("?pop=%d", popBatch)
	newest, err := drain(func() ([]message, error) { return q.pop(ctx, url) }, q.Superseded)
	if err != nil || newest == nil {
		return nil, err
	}
	return newest.Body, nil
}

// empty asks whether the queue holds nothing to pop, before a pop: in
// Zaqar a pop is a claim, which writes to the message store even when
// the queue is empty (a claim object PUT to Swift, replicated and later
// expired), while a listing only reads. An idle poll then costs Zaqar's
// store one read instead of a read and a write. Only a clear "nothing"
// skips the pop; any other answer leaves the decision to the pop.
func (q *Queue) empty(ctx context.Context, base string) (bool, error) {
	// echo: messages posted under this client's id count too, as a pop
	// takes them.
	url := base + "?limit=1&echo=true"
	resp, err := q.send(ctx, q.Client.Do, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	switch resp.Status {
	case http.StatusNoContent:
		return true, nil
	case http.StatusOK:
		var answer struct {
			Messages *[]json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(resp.Body, &answer) == nil && answer.Messages != nil && len(*answer.Messages) == 0 {
			return true, nil
		}
	}
	return false, nil
}

// drain pops batches until the queue is empty, or maxBatches, and returns
// the newest message, nil if there was none. Each message a newer one
// supersedes goes to superseded, if set, as soon as it is known for old.
func drain(pop func() ([]message, error), superseded func(json.RawMessage)) (*message, error) {
	var newest *message
	for batch := 0; batch < maxBatches; batch++ {
		msgs, err := pop()
		if err != nil {
			return nil, err
		}
		for i := range msgs {
			// Equal ages: the later in the answer is the newer.
			older := &msgs[i]
			if newest == nil || msgs[i].Age <= newest.Age {
				older, newest = newest, &msgs[i]
			}
			if older != nil && superseded != nil {
				superseded(older.Body)
			}
		}
		if len(msgs) < popBatch {
			break
		}
	}
	return newest, nil
}

// pop makes one pop request.
func (q *Queue) pop(ctx context.Context, url string) ([]message, error) {
	resp, err := q.send(ctx, q.Client.Do, http.MethodDelete, url, nil)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.Status == http.StatusNoContent || (resp.Status == http.StatusOK && len(resp.Body) == 0):
		return nil, nil
	case resp.Status != http.StatusOK:
		return nil, &StatusError{Method: http.MethodDelete, URL: secret.RedactURL(url), Status: resp.Status}
	}
	return q.decodeMessages(resp.Body)
}

// send makes an authenticated request with do (the Client's Do, or its
// Deliver when only the status matters); a refused token is replaced
// once.
func (q *Queue) send(ctx context.Context, do func(context.Context, string, string, http.Header, []byte) (*httpclient.Response, error),
	method, url string, body []byte) (*httpclient.Response, error) {
	for attempt := 0; ; attempt++ {
		token, err := q.Session.Token(ctx)
		if err != nil {
			return nil, err
		}
		h := http.Header{"X-Auth-Token": {token}, "Client-ID": {q.ClientID()}, "X-Project-ID": {q.Session.Creds.ProjectID},
			"Accept": {"application/json"}}
		if body != nil {
			h.Set("Content-Type", "application/json")
		}
		resp, err := do(ctx, method, url, h, body)
		if err != nil {
			return nil, err
		}
		if resp.Status == http.StatusUnauthorized && attempt == 0 {
			q.Session.Invalidate()
			continue
		}
		return resp, nil
	}
}

// decodeMessages reads a pop's answer message by message: the messages
// are consumed already, so one that cannot be read is skipped with a
// warning rather than taking the others with it.
func (q *Queue) decodeMessages(body []byte) ([]message, error) {
	var answer struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if len(body) == 0 || string(body) == `""` {
		return nil, nil
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("the answer of queue %s is not JSON: %w", q.Name, err)
	}
	out := make([]message, 0, len(answer.Messages))
	for _, raw := range answer.Messages {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			q.Log.Warn(fmt.Sprintf("Skipping a message of queue %s: %v", q.Name, err))
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

// Post posts one message whose body is the JSON document body, kept for
// ttl, with API v1.1 as Heat's own agents do.
func (q *Queue) Post(ctx context.Context, body json.RawMessage, ttl time.Duration) error {
	if _, err := q.Session.Client(ctx); err != nil {
		return err
	}
	endpoint, err := q.Session.Endpoint("messaging", q.Region)
	if err != nil {
		return err
	}
	if !json.Valid(body) {
		return fmt.Errorf("the message for queue %s is not JSON", q.Name)
	}
	// The body goes as the caller serialised it.
	doc := fmt.Appendf(nil, `{"messages": [{"body": %s, "ttl": %d}]}`, body, int(ttl/time.Second))
	url := strings.TrimRight(endpoint, "/") + "/v1.1/queues/" + q.Name + "/messages"
	// Posted is posted, whatever the answer's body does.
	resp, err := q.send(ctx, q.Client.Deliver, http.MethodPost, url, doc)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		return &StatusError{Method: http.MethodPost, URL: secret.RedactURL(url), Status: resp.Status}
	}
	return nil
}

// StatusError is an answer with a status the request did not expect.
type StatusError struct {
	// URL is without its query.
	Method, URL string
	Status      int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: status %d", e.Method, e.URL, e.Status)
}

// HTTPStatus is e's Status.
func (e *StatusError) HTTPStatus() int { return e.Status }

func uuid4() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
