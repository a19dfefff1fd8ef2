// Package zaqarws is the server's side of Zaqar's websocket API v2 for
// the test kits: zaqartest's one queue for unit tests and the fleet's
// model of thousands (test/fleet/zaqarmodel) speak the same wire
// protocol through it. A connection authenticates, creates its
// queue, subscribes to it (no subscriber: this connection, as Zaqar
// does), pops (message_delete_many with pop) or lists (message_list);
// every message posted to a subscribed queue is pushed to it as a
// notification until the subscription's ttl ends; pings are answered
// with pongs. What the queues hold is the Backend's.
package zaqarws

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Backend holds the queues a Server's connections act on.
type Backend interface {
	// Authenticate tells whether token is a valid Keystone token.
	Authenticate(token string) bool
	// HasQueue tells whether queue name may be used (queue_create and
	// subscription_create are refused otherwise).
	HasQueue(name string) bool
	// Pop takes up to n messages of the queue; List returns up to n
	// without taking them. Both answer JSON items of a "messages" list.
	Pop(queue string, n int) []string
	List(queue string, n int) []string
	// Subscribe calls push with the body of every message posted to the
	// queue from now on, until cancel is called.
	Subscribe(queue string, push func(body string)) (cancel func())
}

// Server serves the websocket. Its zero value needs Backend and
// ProjectID.
type Server struct {
	Backend   Backend
	ProjectID string
	// Upgrader upgrades the HTTP request (its zero value when nil).
	Upgrader *websocket.Upgrader
	// OnFrame, when set, is told of every frame: in for the client's,
	// kind the request's action, "notification", "response", "ping" or
	// "pong", n its length.
	OnFrame func(in bool, kind string, n int)
	// OnSubscribed, when set, is called once a connection subscribed,
	// with a function that pushes a body to it (zaqartest's scripted
	// notifications).
	OnSubscribed func(push func(body string))
	// Refuse, when set and true, refuses every authentication.
	Refuse func() bool
	// IgnorePings, when set and true, leaves pings unanswered and
	// uncounted, as a peer that is gone without a word does.
	IgnorePings func() bool
	// RefuseSubscriptions, when set and true, answers
	// subscription_create 503, as a Zaqar whose notifications are down.
	RefuseSubscriptions func() bool
	// OnRequest, when set, is told of every request whose headers are
	// right, by action, before it is served.
	OnRequest func(action string)
	// OnClosed, when set, is told that a connection ended, clean when
	// the client closed it with a normal closure frame.
	OnClosed func(clean bool)

	mu    sync.Mutex
	conns map[*websocket.Conn]bool
}

// CloseAll drops every open connection, as a restarting Zaqar does.
func (s *Server) CloseAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
	return len(s.conns)
}

// Open is how many connections are open.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) track(c *websocket.Conn, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[*websocket.Conn]bool{}
	}
	if open {
		s.conns[c] = true
	} else {
		delete(s.conns, c)
	}
}

func (s *Server) frame(in bool, kind string, n int) {
	if s.OnFrame != nil {
		s.OnFrame(in, kind, n)
	}
}

// request is a client's frame.
type request struct {
	Action  string            `json:"action"`
	Headers map[string]string `json:"headers"`
	Body    map[string]any    `json:"body"`
}

// ServeHTTP upgrades the request and serves the connection until it
// closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	up := s.Upgrader
	if up == nil {
		up = &websocket.Upgrader{}
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.track(conn, true)
	defer s.track(conn, false)
	c := &session{srv: s, conn: conn}
	defer c.close()
	conn.SetPingHandler(func(data string) error {
		if s.IgnorePings != nil && s.IgnorePings() {
			return nil
		}
		s.frame(true, "ping", len(data))
		s.frame(false, "pong", len(data))
		// WriteControl may run beside the writer's writes.
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(10*time.Second))
	})
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			if s.OnClosed != nil {
				s.OnClosed(websocket.IsCloseError(err, websocket.CloseNormalClosure))
			}
			return
		}
		var req request
		if err := json.Unmarshal(b, &req); err != nil {
			s.frame(true, "invalid", len(b))
			c.reply("", 400, `{"error": "not JSON"}`)
			continue
		}
		s.frame(true, req.Action, len(b))
		c.handle(req)
	}
}

// session is one connection's state.
type session struct {
	srv    *Server
	conn   *websocket.Conn
	wmu    sync.Mutex
	authed bool
	token  string // the authentication's, checked on every request
	queue  string
	// subscription
	smu     sync.Mutex
	cancel  func()
	expires time.Time
	// notes feeds the writer of notifications, so that a post never
	// waits for a subscriber's socket; one that is behind loses what
	// does not fit, as a subscriber that is gone would.
	notes   chan string
	pushers sync.WaitGroup
}

func (c *session) write(kind, msg string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.srv.frame(false, kind, len(msg))
	c.conn.WriteMessage(websocket.TextMessage, []byte(msg))
}

func (c *session) reply(action string, status int, body string) {
	c.write("response", fmt.Sprintf(`{"request": {"action": %q}, "headers": {"status": %d}, "body": %s}`, action, status, body))
}

// notify is a notification of a message posted to queue, as Zaqar frames
// one for a websocket subscriber.
func notify(queue, body string) string {
	return `{"body": ` + body + `, "ttl": 3600, "queue_name": ` + fmt.Sprintf("%q", queue) + `, "Message_Type": "Notification"}`
}

func (c *session) handle(req request) {
	s := c.srv
	if req.Headers["Client-ID"] == "" || req.Headers["X-Project-ID"] != s.ProjectID {
		c.reply(req.Action, 400, `{"error": "headers"}`)
		return
	}
	if s.OnRequest != nil {
		s.OnRequest(req.Action)
	}
	// As Zaqar does once the token the socket authenticated with
	// expires, requests are refused from then on.
	if req.Action != "authenticate" && c.authed && !s.Backend.Authenticate(c.token) {
		c.reply(req.Action, 401, `{"error": "token expired"}`)
		return
	}
	queue, _ := req.Body["queue_name"].(string)
	switch req.Action {
	case "authenticate":
		c.token = req.Headers["X-Auth-Token"]
		c.authed = (s.Refuse == nil || !s.Refuse()) && s.Backend.Authenticate(c.token)
		if !c.authed {
			c.reply(req.Action, 401, `{"error": "auth"}`)
			return
		}
		c.reply(req.Action, 200, `{}`)
	case "queue_create":
		if !c.authed || !s.Backend.HasQueue(queue) {
			c.reply(req.Action, 403, `{}`)
			return
		}
		c.reply(req.Action, 201, `{}`)
	case "subscription_create":
		if !c.authed || !s.Backend.HasQueue(queue) {
			c.reply(req.Action, 403, `{}`)
			return
		}
		if s.RefuseSubscriptions != nil && s.RefuseSubscriptions() {
			c.reply(req.Action, 503, `{"error": "notifications are down"}`)
			return
		}
		ttl, _ := req.Body["ttl"].(float64)
		c.subscribe(queue, time.Duration(ttl*float64(time.Second)))
		c.reply(req.Action, 201, fmt.Sprintf(`{"message": "Subscription %s created.", "subscription_id": "sub-%s"}`, queue, queue))
		if s.OnSubscribed != nil {
			c.pushers.Add(1)
			go func() {
				defer c.pushers.Done()
				s.OnSubscribed(func(body string) { c.write("notification", notify(queue, body)) })
			}()
		}
	case "message_delete_many", "message_list":
		if !c.authed || !s.Backend.HasQueue(queue) {
			c.reply(req.Action, 403, `{}`)
			return
		}
		n := 10
		if req.Action == "message_delete_many" {
			pop, ok := req.Body["pop"].(float64)
			if !ok { // deleting by ids: not what the agent does
				c.reply(req.Action, 400, `{"error": "pop"}`)
				return
			}
			n = int(pop)
		} else if l, ok := req.Body["limit"].(float64); ok {
			n = int(l)
		}
		var msgs []string
		if req.Action == "message_delete_many" {
			msgs = s.Backend.Pop(queue, n)
		} else {
			msgs = s.Backend.List(queue, n)
		}
		c.reply(req.Action, 200, `{"messages": [`+strings.Join(msgs, ", ")+`]}`)
	default:
		c.reply(req.Action, 400, `{"error": "unknown action"}`)
	}
}

// subscribe subscribes the connection to queue for ttl (no ttl: for as
// long as it is open); subscribing again renews it. Only the reading
// goroutine calls it.
func (c *session) subscribe(queue string, ttl time.Duration) {
	c.smu.Lock()
	c.expires = time.Time{}
	if ttl > 0 {
		c.expires = time.Now().Add(ttl)
	}
	old, same := c.cancel, c.cancel != nil && c.queue == queue
	notes := make(chan string, 16)
	if !same {
		c.queue, c.notes, c.cancel = queue, notes, nil
	}
	c.smu.Unlock()
	if same {
		return
	}
	if old != nil {
		old()
	}
	c.pushers.Add(1)
	go func() {
		defer c.pushers.Done()
		for body := range notes {
			c.write("notification", notify(queue, body))
		}
	}()
	// The backend calls push under its own lock: the session's is
	// taken inside it, never around a call into the backend.
	cancel := c.srv.Backend.Subscribe(queue, func(body string) {
		c.smu.Lock()
		defer c.smu.Unlock()
		if c.notes != notes || !c.expires.IsZero() && !time.Now().Before(c.expires) {
			return
		}
		select {
		case notes <- body:
		default:
		}
	})
	c.smu.Lock()
	c.cancel = func() {
		cancel()
		c.smu.Lock()
		if c.notes == notes {
			c.notes = nil
		}
		c.smu.Unlock()
		close(notes)
	}
	c.smu.Unlock()
}

func (c *session) close() {
	c.conn.Close()
	c.smu.Lock()
	cancel := c.cancel
	c.cancel = nil
	c.smu.Unlock()
	if cancel != nil {
		cancel()
	}
	c.pushers.Wait()
}
