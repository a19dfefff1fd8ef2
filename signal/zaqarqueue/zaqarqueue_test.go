package zaqarqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/heatapi"
	"github.com/tripleo-go/agent/signal/zaqarqueue"
)

// setup is a Zaqar cloud whose catalog also lists a Heat that counts
// what it gets, and a ZAQAR_SIGNAL deployment (which carries
// deploy_auth_url too, as Heat makes them).
func setup(t *testing.T) (*zaqartest.Cloud, *atomic.Int32, *deployment.Deployment) {
	c := zaqartest.New("queue-1", "pa55word")
	t.Cleanup(c.Close)
	var heatHits atomic.Int32
	heat := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { heatHits.Add(1) }))
	t.Cleanup(heat.Close)
	c.KS.SetCatalog(map[string]string{"messaging": c.Srv.URL + "/zaqar", "orchestration": heat.URL})
	d, err := deployment.Parse([]byte(`{"id": "5555", "group": "script", "inputs": [
		{"name": "deploy_auth_url", "value": "` + c.AuthURL() + `"},
		{"name": "deploy_user_id", "value": "uid"}, {"name": "deploy_password", "value": "pa55word"},
		{"name": "deploy_project_id", "value": "pid"}, {"name": "deploy_stack_id", "value": "st/uuid"},
		{"name": "deploy_resource_name", "value": "dep"}, {"name": "deploy_region_name", "value": "RegionOne"},
		{"name": "deploy_queue_id", "value": "queue-1"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c, &heatHits, d
}

var opts = signal.Options{Budget: time.Second, Transports: signal.Transports{zaqarqueue.Transport, signal.Else(heatapi.Transport)}}

// §3.2: one message, the signal data as its body, for 600 s, with a
// Client-ID and the project (zaqartest refuses a post without them), and
// nothing through the Heat API.
func TestZaqarSignal(t *testing.T) {
	c, heatHits, d := setup(t)
	data := jsondoc.NewObject(2)
	data.Set("deploy_stdout", "\u00e9")
	data.Set("deploy_status_code", jsondoc.Int(0))
	kinds, err := signal.Send(context.Background(), d, data, opts)
	if err != nil || len(kinds) != 1 || kinds[0] != zaqarqueue.Kind {
		t.Fatalf("%v %v", kinds, err)
	}
	posted := c.Posted()
	if len(posted) != 1 || posted[0].TTL != 600 || posted[0].ClientID == "" ||
		string(posted[0].Body) != `{"deploy_stdout": "\u00e9", "deploy_status_code": 0}` {
		t.Fatalf("posted %+v", posted)
	}
	if heatHits.Load() != 0 {
		t.Fatalf("%d requests to the Heat API", heatHits.Load())
	}
}

// A big result is trimmed to fit Zaqar's default max_messages_post_size,
// which counts the whole post.
func TestZaqarSignalIsTrimmedToThePostLimit(t *testing.T) {
	c, _, d := setup(t)
	data := jsondoc.NewObject(2)
	data.Set("deploy_stdout", strings.Repeat("o", 400_000)+"THE END")
	data.Set("deploy_stderr", strings.Repeat("e", 100_000))
	if _, err := signal.Send(context.Background(), d, data, opts); err != nil {
		t.Fatal(err)
	}
	posted := c.Posted()
	post := `{"messages": [{"body": ` + string(posted[0].Body) + `, "ttl": 600}]}`
	if len(post) > zaqarqueue.MaxPost || len(post) < zaqarqueue.MaxPost-30 || !strings.Contains(post, `THE END", "deploy_stderr": "eee`) {
		t.Fatalf("a post of %d bytes (limit %d)", len(post), zaqarqueue.MaxPost)
	}
}

func TestZaqarSignalWrongRegion(t *testing.T) {
	_, _, d := setup(t)
	inputs, _ := d.Object().Get("inputs")
	for _, in := range inputs.([]jsondoc.Value) {
		if n, _ := in.(*jsondoc.Object).Get("name"); n == "deploy_region_name" {
			in.(*jsondoc.Object).Set("value", "RegionTwo")
		}
	}
	_, err := signal.Send(context.Background(), d, jsondoc.NewObject(0), opts)
	if err == nil || !strings.Contains(err.Error(), "ZAQAR_SIGNAL: no public messaging endpoint in region RegionTwo") {
		t.Fatalf("got %v", err)
	}
}
