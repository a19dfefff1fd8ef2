package zaqar

// The websocket transport ([zaqar] use_websockets): authenticate, create
// the queue, subscribe this connection to it, pop what is pending, and if
// nothing is, wait for the next snapshot up to WaitTimeout (the reference
// waited without a deadline, blocking its daemon).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tripleo-go/agent/collectors/httpclient"
	"github.com/tripleo-go/agent/internal/pyjson"
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
	headers map[string]string
	queue   string
	// notes are notifications that arrived while waiting for a response.
	notes []json.RawMessage
}

func (c *Collector) dialWebsocket(ctx context.Context, endpoint, token string) (*wsConn, error) {
	opts := httpclient.Options{Insecure: !c.Validate}
	if c.Validate {
		opts.CAFile = c.CAFile
	}
	tlsConf, err := httpclient.TLSConfig(opts)
	if err != nil {
		return nil, fmt.Errorf("[zaqar] ca_file: %w", err)
	}
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second, TLSClientConfig: tlsConf, Proxy: http.ProxyFromEnvironment}
	conn, _, err := d.DialContext(ctx, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("websocket %s: %v", endpoint, err)
	}
	w := &wsConn{conn: conn, queue: c.QueueID,
		headers: map[string]string{"Client-ID": c.clientID, "X-Project-ID": c.Session.Creds.ProjectID}}
	// Every read and write ends with the pass's context.
	context.AfterFunc(ctx, func() { conn.Close() })
	if _, err := w.send(ctx, "authenticate", nil, map[string]string{"X-Auth-Token": token}); err != nil {
		conn.Close()
		return nil, err
	}
	return w, nil
}

// send makes one request and returns its response's body.
func (w *wsConn) send(ctx context.Context, action string, body any, extra map[string]string) (json.RawMessage, error) {
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
	}
	if err := w.conn.WriteJSON(msg); err != nil {
		return nil, fmt.Errorf("zaqar %s: %v", action, err)
	}
	for {
		f, err := w.read(ctx)
		if err != nil {
			return nil, fmt.Errorf("zaqar %s: %v", action, err)
		}
		if f.Request == nil { // a notification, kept for later
			w.notes = append(w.notes, f.Body)
			continue
		}
		if st := f.status(); st >= 300 {
			return nil, fmt.Errorf("zaqar %s: status %d", action, st)
		}
		return f.Body, nil
	}
}

func (w *wsConn) read(ctx context.Context) (*frame, error) {
	if dl, ok := ctx.Deadline(); ok {
		w.conn.SetReadDeadline(dl)
	}
	var f frame
	if err := w.conn.ReadJSON(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// popWebsocket returns the newest pending snapshot, or waits for one.
func (c *Collector) popWebsocket(ctx context.Context) (pyjson.Value, error) {
	token, err := c.Session.Token(ctx)
	if err != nil {
		return nil, err
	}
	endpoint, err := c.Session.Endpoint("messaging-websocket", c.Region)
	if err != nil {
		return nil, err
	}
	wait := c.WaitTimeout
	if wait <= 0 {
		wait = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	w, err := c.dialWebsocket(ctx, endpoint, token)
	if err != nil {
		return nil, err
	}
	defer w.conn.Close()
	if _, err := w.send(ctx, "queue_create", map[string]any{"queue_name": c.QueueID}, nil); err != nil {
		return nil, err
	}
	if _, err := w.send(ctx, "subscription_create", map[string]any{"queue_name": c.QueueID, "ttl": 10000}, nil); err != nil {
		return nil, err
	}
	newest, err := drain(func() ([]message, error) {
		body, err := w.send(ctx, "message_delete_many", map[string]any{"queue_name": c.QueueID, "pop": popBatch}, nil)
		if err != nil {
			return nil, err
		}
		return c.decodeMessages(body)
	})
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	switch {
	case newest != nil:
		raw = newest.Body
	case len(w.notes) > 0:
		raw = w.notes[len(w.notes)-1]
	default:
		wctx, wcancel := context.WithTimeout(ctx, wait)
		defer wcancel()
		stop := context.AfterFunc(wctx, func() { w.conn.SetReadDeadline(time.Now()) })
		defer stop()
		for raw == nil {
			f, err := w.read(wctx)
			if err != nil {
				var ne net.Error // gorilla re-wraps timeouts in its own type
				if wctx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
					return nil, nil // nothing new within the wait
				}
				return nil, fmt.Errorf("zaqar websocket: %v", err)
			}
			if f.Request == nil {
				raw = f.Body
			}
		}
	}
	doc, err := pyjson.Loads(raw)
	if err != nil {
		return nil, fmt.Errorf("a message of queue %s is not JSON: %v", c.QueueID, err)
	}
	if _, ok := doc.(*pyjson.Object); !ok {
		return nil, errors.New("a message of queue " + c.QueueID + " is not a JSON object")
	}
	return doc, nil
}
