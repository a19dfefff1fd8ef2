package zaqartest

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Requests is how many Zaqar API requests were answered, HTTP and
// websocket (Keystone's and pings apart).
func (c *Cloud) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.pops + c.lists + len(c.posted)
	for _, k := range c.actions {
		n += k
	}
	return n
}

// Actions is how many websocket requests of each action were answered.
func (c *Cloud) Actions() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for a, n := range c.actions {
		out[a] = n
	}
	return out
}

// Pings is how many websocket pings were answered.
func (c *Cloud) Pings() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pings
}

// CleanCloses is how many websockets the client closed with a close
// frame (normal closure).
func (c *Cloud) CleanCloses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cleanCloses
}

// Subscribers is how many websockets are subscribed now.
func (c *Cloud) Subscribers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// DropSockets closes every open websocket without a close frame, as a
// server that died or a network that broke would.
func (c *Cloud) DropSockets() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.conns {
		conn.NetConn().Close()
	}
}

// RefuseSubscriptions makes subscription_create answer 503 (true), as
// a Zaqar whose notifications are down would.
func (c *Cloud) RefuseSubscriptions(refuse bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subRefuse = refuse
}

// IgnorePings leaves websocket pings unanswered (true), as a peer that
// is gone without a word does.
func (c *Cloud) IgnorePings(ignore bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ignorePings = ignore
}

// serveWebsocket speaks Zaqar's websocket protocol for the queue.
func (c *Cloud) serveWebsocket(w http.ResponseWriter, r *http.Request) {
	conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	c.mu.Lock()
	if c.conns == nil {
		c.conns, c.actions = map[*websocket.Conn]bool{}, map[string]int{}
	}
	c.conns[conn] = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.conns, conn)
		c.mu.Unlock()
	}()
	conn.SetPingHandler(func(data string) error {
		c.mu.Lock()
		ignore := c.ignorePings
		if !ignore {
			c.pings++
		}
		c.mu.Unlock()
		if ignore {
			return nil
		}
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	var wmu sync.Mutex
	write := func(msg string) {
		wmu.Lock()
		defer wmu.Unlock()
		conn.WriteMessage(websocket.TextMessage, []byte(msg))
	}
	c.mu.Lock()
	refuse, post := c.wsRefuse, c.wsPost
	c.mu.Unlock()
	authed, token := false, ""
	var notifier sync.WaitGroup
	defer notifier.Wait()
	notification := func(body string) string {
		return `{"body": ` + body + `, "ttl": 3600, "queue_name": "` + c.Queue + `", "Message_Type": "Notification"}`
	}
	var sub chan string
	defer func() {
		if sub != nil {
			c.mu.Lock()
			delete(c.subs, sub)
			close(sub)
			c.mu.Unlock()
		}
	}()
	for {
		var req struct {
			Action  string            `json:"action"`
			Headers map[string]string `json:"headers"`
			Body    map[string]any    `json:"body"`
		}
		if err := conn.ReadJSON(&req); err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				c.mu.Lock()
				c.cleanCloses++
				c.mu.Unlock()
			}
			return
		}
		reply := func(status int, body string) {
			write(fmt.Sprintf(`{"request": {"action": %q}, "headers": {"status": %d}, "body": %s}`, req.Action, status, body))
		}
		if req.Headers["Client-ID"] == "" || req.Headers["X-Project-ID"] != c.KS.ProjectID {
			reply(400, `{"error": "headers"}`)
			continue
		}
		c.mu.Lock()
		c.actions[req.Action]++
		c.mu.Unlock()
		// As Zaqar does when the token of the socket's authentication
		// expires, requests are refused from then on.
		if req.Action != "authenticate" && authed && !c.KS.Valid(token) {
			reply(401, `{"error": "token expired"}`)
			continue
		}
		switch req.Action {
		case "authenticate":
			token = req.Headers["X-Auth-Token"]
			authed = !refuse && c.KS.Valid(token)
			if !authed {
				reply(401, `{"error": "auth"}`)
				continue
			}
			reply(200, `{}`)
		case "queue_create", "subscription_create":
			if !authed || req.Body["queue_name"] != c.Queue {
				reply(403, `{}`)
				continue
			}
			c.mu.Lock()
			refused := c.subRefuse && req.Action == "subscription_create"
			c.mu.Unlock()
			if refused {
				reply(503, `{"error": "notifications are down"}`)
				continue
			}
			reply(201, `{}`)
			if req.Action == "subscription_create" && sub == nil {
				sub = make(chan string, 16)
				c.mu.Lock()
				if c.subs == nil {
					c.subs = map[chan string]bool{}
				}
				c.subs[sub] = true
				c.mu.Unlock()
				notifier.Add(1)
				go func(sub <-chan string) {
					defer notifier.Done()
					for body := range sub {
						write(notification(body))
					}
				}(sub)
			}
			if req.Action == "subscription_create" && post != "" {
				notifier.Add(1)
				go func() {
					defer notifier.Done()
					time.Sleep(200 * time.Millisecond)
					write(notification(post))
				}()
			}
		case "message_list":
			c.mu.Lock()
			var msgs string
			if len(c.pending) > 0 {
				msgs = `{"id": "m0", "age": 1, "ttl": 3600, "body": {}}`
			}
			c.mu.Unlock()
			reply(200, `{"messages": [`+msgs+`]}`)
		case "message_delete_many":
			c.mu.Lock()
			n := min(int(req.Body["pop"].(float64)), len(c.pending))
			msgs := c.popLocked(n)
			c.mu.Unlock()
			reply(200, `{"messages": [`+msgs+`]}`)
		default:
			reply(400, `{}`)
		}
	}
}
