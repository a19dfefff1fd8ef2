package zaqar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/openstack/keystone"
	"github.com/tripleo-go/agent/internal/openstack/zaqar"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
)

const password = "S3CRET-pw"

func newCloud(t testing.TB) *zaqartest.Cloud {
	c := zaqartest.New("q1", password)
	t.Cleanup(c.Close)
	return c
}

func newCollector(t testing.TB, c *zaqartest.Cloud, log *bytes.Buffer) *Collector {
	client, err := httpclient.New(httpclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	session := &keystone.Session{Creds: keystone.Credentials{AuthURL: c.AuthURL(), UserID: "uid", ProjectID: "pid", Password: password},
		HTTP: client.Standard()}
	return &Collector{
		Queue:          &zaqar.Queue{Session: session, Name: "q1", Client: client, Log: logger},
		DeploymentKeys: []string{"deployments"},
		CachePath:      filepath.Join(t.TempDir(), "zaqar.json"),
		Log:            logger,
	}
}

func snapshot(v int) string {
	return fmt.Sprintf(`{"z": %d, "deployments": [{"name": "d%d", "group": "os-apply-config", "config": {"v": %d}}], "a": 0}`, v, v, v)
}

func collect(t testing.TB, col *Collector) (names []string, first string) {
	t.Helper()
	entries, err := col.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names, jsondoc.Dumps(entries[0].Content)
}

// One poll takes every pending snapshot, in batches, and keeps the
// newest; the queue is then empty and the snapshot stands.
func TestNewestOfAllPending(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	for v := 1; v <= 25; v++ {
		c.Post(snapshot(v))
	}
	names, doc := collect(t, col)
	if strings.Join(names, " ") != "zaqar d25" || !strings.HasPrefix(doc, `{"z": 25, "deployments"`) {
		t.Fatalf("keys %v, doc %s", names, doc)
	}
	if c.Pops() != 2 || c.Pending() != 0 {
		t.Fatalf("%d pops, %d left", c.Pops(), c.Pending())
	}
	names, doc = collect(t, col) // empty queue
	if strings.Join(names, " ") != "zaqar d25" || !strings.HasPrefix(doc, `{"z": 25,`) {
		t.Fatalf("after an empty pop: keys %v, doc %s", names, doc)
	}
	if strings.Contains(log.String(), password) {
		t.Fatal("the password in the log")
	}
}

// A new process facing an empty queue takes the snapshot the cache holds;
// with none, the source is unavailable and says why.
func TestEmptyQueueAfterRestart(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(err.Error(), "queue q1 is empty and no earlier metadata is known") {
		t.Fatalf("err %v log %s", err, log.String())
	}
	os.WriteFile(col.CachePath, []byte(snapshot(7)), 0o600)
	col = newCollector(t, c, &log)
	os.WriteFile(col.CachePath, []byte(snapshot(7)), 0o600)
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d7" {
		t.Fatalf("keys %v", names)
	}
}

// A refused token is replaced once, over HTTP and over a websocket.
func TestRevokedTokenIsReplacedOnce(t *testing.T) {
	for _, websocket := range []bool{false, true} {
		t.Run(fmt.Sprint("websocket=", websocket), func(t *testing.T) {
			c := newCloud(t)
			col := newCollector(t, c, &bytes.Buffer{})
			if websocket {
				col.UseWebsockets, col.WaitTimeout = true, 100*time.Millisecond
			}
			c.Post(snapshot(1))
			collect(t, col)
			k := c.KS.Requests()
			c.KS.RevokeAll()
			c.Post(snapshot(2))
			if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d2" || c.KS.Requests() != k+1 {
				t.Fatalf("keys %v, keystone requests %d -> %d", names, k, c.KS.Requests())
			}
		})
	}
}

func TestNotConfiguredWarns(t *testing.T) {
	for _, tc := range []struct {
		change func(col *Collector)
		log    string
	}{
		{func(col *Collector) { col.Queue.Name = "" }, "No queue_id configured."},
		{func(col *Collector) { col.Queue.Session.Creds.AuthURL = "" }, "No auth_url configured."},
		{func(col *Collector) { col.Validate, col.CAFile = true, "" }, "No CA file configured when flag ssl certificate validation is on."},
	} {
		c := newCloud(t)
		var log bytes.Buffer
		col := newCollector(t, c, &log)
		tc.change(col)
		if _, err := col.Collect(context.Background()); !errors.Is(err, collectors.ErrNotConfigured) || !strings.Contains(log.String(), "level=WARN msg=\""+tc.log) {
			t.Errorf("err %v log %s", err, log.String())
		}
	}
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *zaqartest.Cloud, col *Collector)
		log    string
	}{
		{"no messaging endpoint", func(c *zaqartest.Cloud, col *Collector) {
			c.KS.SetCatalog(map[string]string{"orchestration": "http://x"})
		}, "no public messaging endpoint"},
		{"a message that is not an object", func(c *zaqartest.Cloud, col *Collector) { c.Post(`[1]`) }, "a message of queue q1 is not a JSON object"},
		{"wrong queue", func(c *zaqartest.Cloud, col *Collector) { col.Queue.Name = "q2" }, "status 400"},
		{"websocket refused token", func(c *zaqartest.Cloud, col *Collector) {
			col.UseWebsockets = true
			c.RefuseWebsocket()
		}, "zaqar authenticate: status 401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			var log bytes.Buffer
			col := newCollector(t, c, &log)
			tc.change(c, col)
			_, err := col.Collect(context.Background())
			if !errors.Is(err, collectors.ErrNotAvailable) || !strings.Contains(collectors.Cause(err).Error(), tc.log) {
				t.Fatalf("err %v log %s", err, log.String())
			}
			if strings.Contains(log.String()+err.Error(), password) {
				t.Fatalf("the password in the log or the cause: %s %v", log.String(), err)
			}
		})
	}
}

func TestWebsocket(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	col.UseWebsockets, col.WaitTimeout = true, 2*time.Second
	for v := 1; v <= 23; v++ {
		c.Post(snapshot(v))
	}
	if names, doc := collect(t, col); strings.Join(names, " ") != "zaqar d23" || !strings.HasPrefix(doc, `{"z": 23,`) {
		t.Fatalf("pending: keys %v doc %s", names, doc)
	}
	// Nothing pending: the pass waits for the next snapshot.
	c.NotifyOnSubscribe(snapshot(30))
	start := time.Now()
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d30" {
		t.Fatalf("notified: keys %v", names)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("waited %v for a snapshot sent after 200ms", took)
	}
	// Nothing at all within the wait: the last snapshot stands.
	c.NotifyOnSubscribe("")
	col.WaitTimeout = 300 * time.Millisecond
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d30" {
		t.Fatalf("quiet: keys %v", names)
	}
}

// Real Zaqar gives fractional ages; a message that cannot be read is
// skipped with a warning, not the whole pop (whose messages are gone).
func TestMessagesReadOneByOne(t *testing.T) {
	c := newCloud(t)
	var log bytes.Buffer
	col := newCollector(t, c, &log)
	c.AnswerNextPop(`{"messages": [{"age": 4.6, "body": ` + snapshot(1) + `}, {"age": "old", "body": {}}, {"age": 0.25, "body": ` + snapshot(2) + `}]}`)
	if names, _ := collect(t, col); strings.Join(names, " ") != "zaqar d2" {
		t.Fatalf("keys %v", names)
	}
	if !strings.Contains(log.String(), "Skipping a message of queue q1") {
		t.Fatalf("log %s", log.String())
	}
}
