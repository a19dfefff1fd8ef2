package zaqar

// A websocket kept open across passes: authenticated and subscribed to
// the queue, so Zaqar pushes each message posted to it. One goroutine
// reads every frame (notifications to the caller's callback, the answer
// to the one request in flight), another pings; a pong missing past its
// deadline ends the connection as a read error would.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Liveness defaults: a peer gone without a word is noticed within 40 s,
// about the default polling interval, so a dead socket costs no more
// than polling would. Pings are websocket control frames: Zaqar's server
// answers them without touching its store.
const (
	DefaultPingEvery = 30 * time.Second
	DefaultPongWait  = 10 * time.Second
)

// Subscription is an open, subscribed websocket.
type Subscription struct {
	w *wsConn
	// reqMu makes requests one at a time: answers come in order.
	reqMu   sync.Mutex
	answers chan *frame
	done    chan struct{}
	errOnce sync.Once
	err     error
	wg      sync.WaitGroup
	stop    context.CancelFunc
}

// Subscribe opens a websocket, authenticates (a refused token is replaced
// once), creates the queue and subscribes the connection to it for ttl.
// notify runs on the reader's goroutine for each message Zaqar pushes; it
// must not block. The connection lives until Close or until it fails
// (Done); ctx bounds the opening only.
func (q *Queue) Subscribe(ctx context.Context, ttl time.Duration, notify func(body json.RawMessage)) (*Subscription, error) {
	// The socket outlives ctx: only its opening is bounded by it.
	w, err := q.connect(ctx)
	if err != nil {
		return nil, err
	}
	lctx, stop := context.WithCancel(context.Background())
	s := &Subscription{w: w, answers: make(chan *frame, 1), done: make(chan struct{}), stop: stop}
	s.start(lctx, q.pingEvery(), q.pongWait(), notify)
	for _, step := range []struct {
		action string
		body   map[string]any
	}{
		{"queue_create", map[string]any{"queue_name": q.Name}},
		{"subscription_create", map[string]any{"queue_name": q.Name, "ttl": int(ttl / time.Second)}},
	} {
		if _, err := s.request(ctx, step.action, step.body); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func (q *Queue) pingEvery() time.Duration {
	if q.PingEvery > 0 {
		return q.PingEvery
	}
	return DefaultPingEvery
}

func (q *Queue) pongWait() time.Duration {
	if q.PongWait > 0 {
		return q.PongWait
	}
	return DefaultPongWait
}

// start runs the reader and the pinger, both ended by Close.
func (s *Subscription) start(ctx context.Context, every, wait time.Duration, notify func(body json.RawMessage)) {
	conn := s.w.conn
	extend := func() { conn.SetReadDeadline(time.Now().Add(every + wait)) }
	extend()
	conn.SetPongHandler(func(string) error { extend(); return nil })
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		defer close(s.done)
		for {
			f, err := s.w.read(context.Background())
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					err = fmt.Errorf("no answer to a ping within %s", wait)
				}
				s.fail(fmt.Errorf("zaqar websocket: %w", err))
				return
			}
			extend()
			if f.Request == nil {
				notify(f.Body)
				continue
			}
			select {
			case s.answers <- f:
			default: // nobody asked: an answer to a request given up on
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.done:
				return
			case <-t.C:
				if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wait)); err != nil {
					s.fail(fmt.Errorf("zaqar websocket ping: %w", err))
					conn.Close()
					return
				}
			}
		}
	}()
}

func (s *Subscription) fail(err error) { s.errOnce.Do(func() { s.err = err }) }

// Done is closed when the connection has ended; Err then says why.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err is why the connection ended (nil while it is open).
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the connection with a close frame, and waits for its
// goroutines.
func (s *Subscription) Close() {
	s.fail(errors.New("zaqar websocket: closed"))
	s.stop()
	s.w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
		time.Now().Add(time.Second))
	s.w.conn.Close()
	s.wg.Wait()
}

// requestTimeout bounds a request over a kept socket, as the HTTP
// client's timeout bounds one over HTTP: a server that pongs but never
// answers does not hold a pass.
const requestTimeout = 30 * time.Second

// request sends one request and waits for its answer's body.
func (s *Subscription) request(ctx context.Context, action string, body any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	select { // a stale answer must not pass for this one's
	case <-s.answers:
	default:
	}
	if err := s.w.write(ctx, action, body, nil); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("zaqar %s: %w", action, ctx.Err())
	case <-s.done:
		return nil, fmt.Errorf("zaqar %s: %w", action, s.err)
	case f := <-s.answers:
		if st := f.status(); st >= 300 {
			return nil, statusError{action, st}
		}
		return f.Body, nil
	}
}

// PopNewest pops every pending message over the socket and returns the
// body of the newest, nil when there was none. With list, a listing asks
// first whether there is anything (a pop is a claim, a write to Zaqar's
// store even on an empty queue): for the reads no push asked for.
func (s *Subscription) PopNewest(ctx context.Context, q *Queue, list bool) (json.RawMessage, error) {
	if list {
		body, err := s.request(ctx, "message_list", map[string]any{"queue_name": q.Name, "limit": 1, "echo": true})
		if err != nil {
			return nil, err
		}
		var answer struct {
			Messages *[]json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(body, &answer) == nil && answer.Messages != nil && len(*answer.Messages) == 0 {
			return nil, nil
		}
	}
	newest, err := drain(func() ([]message, error) {
		body, err := s.request(ctx, "message_delete_many", map[string]any{"queue_name": q.Name, "pop": popBatch})
		if err != nil {
			return nil, err
		}
		return q.decodeMessages(body)
	}, q.Superseded)
	if err != nil || newest == nil {
		return nil, err
	}
	return newest.Body, nil
}

// statusError is a request's refusal, by status.
type statusError struct {
	action string
	status int
}

func (e statusError) Error() string { return fmt.Sprintf("zaqar %s: status %d", e.action, e.status) }
