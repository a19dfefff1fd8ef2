package zaqar

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/logging"
)

// FuzzPopAnswer reads a pop's answer. A body that is not JSON is a
// one-line error naming the queue; otherwise every message that can be
// read is kept, each body exactly as sent, and the newest (the smallest
// age, the later on a tie) is the one the pop returns.
func FuzzPopAnswer(f *testing.F) {
	for _, s := range []string{
		`{"messages": [{"id": "m1", "age": 3, "ttl": 3600, "body": {"b": 1, "a": 2}}, {"age": 1, "body": {"n": 2}}]}`,
		`{"messages": [{"age": 4.6, "body": {}}, {"age": "old", "body": {}}, {"age": 0.25, "body": [1]}, {"age": 0.25, "body": "last"}]}`,
		`{"messages": []}`, `""`, ``, `{}`, `{"messages": null}`, `{"messages": [null, 1, {"body": null}]}`,
		`{"messages": [{"age": -1e400, "body": 1}]}`, `not json`, `{"messages": [{"age": 1, "body": {"x": "\u00e9"}}]`,
	} {
		f.Add([]byte(s))
	}
	q := &Queue{Name: "q1", Log: logging.Discard}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := q.decodeMessages(body)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, "q1") {
				t.Fatalf("error is not one line naming the queue: %q", msg)
			}
			return
		}
		for _, m := range msgs {
			if m.Body != nil && !json.Valid(m.Body) || m.Body != nil && !bytes.Contains(body, m.Body) {
				t.Fatalf("body %q is not as sent in %q", m.Body, body)
			}
		}
		served, superseded := false, 0
		newest, err := drain(func() ([]message, error) {
			if served {
				t.Fatal("a short batch was not the last")
			}
			served = true
			return msgs, nil
		}, func(json.RawMessage) { superseded++ })
		if err != nil {
			t.Fatal(err)
		}
		if superseded != max(len(msgs)-1, 0) {
			t.Fatalf("%d messages, %d superseded", len(msgs), superseded)
		}
		if len(msgs) == 0 {
			if newest != nil {
				t.Fatalf("no message, newest %+v", newest)
			}
			return
		}
		for i, m := range msgs {
			if m.Age < newest.Age || m.Age == newest.Age && &msgs[i] != newest && i > indexOf(msgs, newest) {
				t.Fatalf("message %d (age %v) is newer than the one returned (age %v)", i, m.Age, newest.Age)
			}
		}
	})
}

func indexOf(msgs []message, m *message) int {
	for i := range msgs {
		if &msgs[i] == m {
			return i
		}
	}
	return -1
}

// FuzzPostThenPop posts a JSON document to a queue (the fake Zaqar of
// zaqartest) and pops it back: the same bytes, key order and all.
func FuzzPostThenPop(f *testing.F) {
	for _, s := range []string{`{"deploy_stdout": "ok", "deploy_status_code": 0}`, `{"b": 1, "a": [true, null]}`,
		`"text"`, `{"x": "\u00e9\ud83d\ude00 <&>"}`, `  {"padded": 1}  `, `1e400`, `{`} {
		f.Add(s)
	}
	q, c := newQueue(f)
	f.Fuzz(func(t *testing.T, body string) {
		if !json.Valid([]byte(body)) {
			if err := q.Post(context.Background(), json.RawMessage(body), time.Minute); err == nil {
				t.Fatalf("%q: not JSON, posted", body)
			}
			return
		}
		if err := q.Post(context.Background(), json.RawMessage(body), time.Minute); err != nil {
			t.Fatal(err)
		}
		popped, err := q.PopNewest(context.Background())
		if want := strings.Trim(body, " \t\r\n"); err != nil || string(popped) != want {
			t.Fatalf("posted %q, popped %q, %v", want, popped, err)
		}
		if c.Pending() != 0 {
			t.Fatalf("%d messages left", c.Pending())
		}
	})
}
