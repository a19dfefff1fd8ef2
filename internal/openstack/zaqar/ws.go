package zaqar

// The websocket transport: authenticate, create the queue, subscribe this
// connection to it, pop what is pending, and if nothing is, wait for the
// next message a bounded time.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tripleo-go/agent/internal/httpclient"
)

// frame is what the server sends: a response (with the request it
// answers and a status header) or a notification (a message's body).
type frame struct {
	Request *json.RawMessage `json:"request"`
	Headers struct {
		Status any `json:"status"`
	} `json:"headers"`
	Body json.RawMessage `json:"body"`
}

func (f *frame) status() int {
	switch s := f.Headers.Status.(type) {
	case float64:
		return int(s)
	case string:
		n, _ := strconv.Atoi(s)
		return n
	}
	return 0
}

type wsConn struct {
	conn    *websocket.Conn
	limit   int64
	option  string
	headers map[string]string
	// notes are notifications that arrived while waiting for a response.
	notes []json.RawMessage
}

// connect opens a websocket and authenticates on it, bounded by ctx; a
// refused token is replaced once.
func (q *Queue) connect(ctx context.Context) (*wsConn, error) {
	for attempt := 0; ; attempt++ {
		token, err := q.Session.Token(ctx)
		if err != nil {
			return nil, err
		}
		endpoint, err := q.Session.Endpoint("messaging-websocket", q.Region)
		if err != nil {
			return nil, err
		}
		w, err := q.dial(ctx, endpoint, token)
		var se statusError
		if errors.As(err, &se) && se.status == http.StatusUnauthorized && attempt == 0 {
			q.Session.Invalidate()
			continue
		}
		return w, err
	}
}

// dial opens a websocket and authenticates on it, both bounded by ctx;
// the connection then outlives ctx.
func (q *Queue) dial(ctx context.Context, endpoint, token string) (*wsConn, error) {
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, TLSClientConfig: q.TLS, Proxy: http.ProxyFromEnvironment}
	conn, _, err := d.DialContext(ctx, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("websocket %s: %w", endpoint, err)
	}
	// Without a limit a frame is read whole, however large it says it is.
	limit := cmp.Or(q.MaxFrame, httpclient.DefaultMaxBody)
	conn.SetReadLimit(limit)
	w := &wsConn{conn: conn, limit: limit, option: q.MaxFrameOption, headers: map[string]string{"Client-ID": q.ClientID(), "X-Project-ID": q.Session.Creds.ProjectID}}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	_, err = w.send(ctx, "authenticate", nil, map[string]string{"X-Auth-Token": token})
	if !stop() || err != nil {
		conn.Close()
		return nil, cmp.Or(err, ctx.Err())
	}
	conn.SetReadDeadline(time.Time{})
	conn.SetWriteDeadline(time.Time{})
	return w, nil
}

// send makes one request and returns its response's body.
func (w *wsConn) send(ctx context.Context, action string, body any, extra map[string]string) (json.RawMessage, error) {
	if err := w.write(ctx, action, body, extra); err != nil {
		return nil, err
	}
	for {
		f, err := w.read(ctx)
		if err != nil {
			return nil, fmt.Errorf("zaqar %s: %w", action, err)
		}
		if f.Request == nil { // a notification, kept for later
			w.notes = append(w.notes, f.Body)
			continue
		}
		if st := f.status(); st >= 300 {
			return nil, statusError{action, st}
		}
		return f.Body, nil
	}
}

// write sends one request; the token, when there is one, only in its
// headers, which no error repeats.
func (w *wsConn) write(ctx context.Context, action string, body any, extra map[string]string) error {
	headers := map[string]string{}
	for k, v := range w.headers {
		headers[k] = v
	}
	for k, v := range extra {
		headers[k] = v
	}
	msg := map[string]any{"action": action, "headers": headers}
	if body != nil {
		msg["body"] = body
	}
	if dl, ok := ctx.Deadline(); ok {
		w.conn.SetWriteDeadline(dl)
	} else {
		w.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	}
	if err := w.conn.WriteJSON(msg); err != nil {
		return fmt.Errorf("zaqar %s: %w", action, err)
	}
	return nil
}

func (w *wsConn) read(ctx context.Context) (*frame, error) {
	if dl, ok := ctx.Deadline(); ok {
		w.conn.SetReadDeadline(dl)
	}
	var f frame
	if err := w.conn.ReadJSON(&f); err != nil {
		if errors.Is(err, websocket.ErrReadLimit) {
			return nil, httpclient.TooLarge(w.limit, w.option)
		}
		return nil, err
	}
	return &f, nil
}

// PopOrWait pops every pending message over a websocket and returns the
// body of the newest; when none is pending it waits up to wait for one to
// be posted. nil: nothing within the wait. A wait of 0 only pops.
func (q *Queue) PopOrWait(ctx context.Context, wait time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	w, err := q.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer w.conn.Close()
	// Every read and write ends with the pass's context.
	context.AfterFunc(ctx, func() { w.conn.Close() })
	if _, err := w.send(ctx, "queue_create", map[string]any{"queue_name": q.Name}, nil); err != nil {
		return nil, err
	}
	// No wait, no subscription: the daemon's own does the waiting.
	if wait > 0 {
		if _, err := w.send(ctx, "subscription_create", map[string]any{"queue_name": q.Name, "ttl": 10000}, nil); err != nil {
			return nil, err
		}
	}
	newest, err := drain(func() ([]message, error) {
		body, err := w.send(ctx, "message_delete_many", map[string]any{"queue_name": q.Name, "pop": popBatch}, nil)
		if err != nil {
			return nil, err
		}
		return q.decodeMessages(body)
	}, q.Superseded)
	switch {
	case err != nil:
		return nil, err
	case newest != nil:
		return newest.Body, nil
	case len(w.notes) > 0:
		return w.notes[len(w.notes)-1], nil
	}
	return w.await(ctx, wait)
}

// await waits up to wait for a notification and returns its body; nil
// when none came.
func (w *wsConn) await(ctx context.Context, wait time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { w.conn.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		f, err := w.read(ctx)
		if err != nil {
			var ne net.Error // gorilla re-wraps timeouts in its own type
			if ctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
				return nil, nil // nothing new within the wait
			}
			return nil, fmt.Errorf("zaqar websocket: %w", err)
		}
		if f.Request == nil {
			return f.Body, nil
		}
	}
}
