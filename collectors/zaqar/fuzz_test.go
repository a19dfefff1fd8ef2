package zaqar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// FuzzQueueMessages answers a poll with the fuzzed pop answer after a
// good snapshot was collected. The collector gives a snapshot from the
// answer (an object it holds), or the last one standing, or a one-line
// error; it never loses the last good snapshot: the next poll, on an
// empty queue, gives what the pass gave, or the earlier snapshot.
func FuzzQueueMessages(f *testing.F) {
	for _, s := range []string{
		`{"messages": [{"age": 1, "body": {"b": 2, "a": 1, "deployments": [{"name": "d", "config": {}}]}}]}`,
		`{"messages": [{"age": 2, "body": {"old": 1}}, {"age": 1, "body": [1]}]}`,
		`{"messages": [{"age": 2, "body": {"old": 1}}, {"age": 1}]}`,
		`{"messages": []}`, `""`, `{"messages": [{"age": "x", "body": {}}]}`, `not json`, `{"messages": [{"body": null}]}`,
	} {
		f.Add([]byte(s))
	}
	c := newCloud(f)
	var log bytes.Buffer
	col := newCollector(f, c, &log)
	const good = `{"good": "snapshot", "deployments": []}`
	f.Fuzz(func(t *testing.T, answer []byte) {
		if len(answer) == 0 {
			return // the fake answers nothing: not an answer to test
		}
		c.Post(good)
		if _, first := collect(t, col); first != good {
			t.Fatalf("first snapshot %s", first)
		}
		c.AnswerNextPop(string(answer))
		entries, err := col.Collect(context.Background())
		var got string
		switch {
		case err != nil:
			if !errors.Is(err, collectors.ErrNotAvailable) || strings.ContainsAny(collectors.Cause(err).Error(), "\r\n") {
				t.Fatalf("error %v", err)
			}
			got = good // a failed pass changes nothing
		default:
			got = jsondoc.Dumps(entries[0].Content)
			if got != good && !inAnswer(answer, got) {
				t.Fatalf("collected %s, neither the last snapshot nor a message of %q", got, answer)
			}
		}
		if _, again := collect(t, col); again != got {
			t.Fatalf("the next poll gave %s, want %s", again, got)
		}
	})
}

// inAnswer reports whether the object doc (as jsondoc.Dumps writes it) is
// the body of a message of the answer.
func inAnswer(answer []byte, doc string) bool {
	var a struct {
		Messages []struct{ Body json.RawMessage }
	}
	if json.Unmarshal(answer, &a) != nil {
		return false
	}
	for _, m := range a.Messages {
		if v, err := jsondoc.Loads(m.Body); err == nil && jsondoc.Dumps(v) == doc {
			return true
		}
	}
	return false
}
