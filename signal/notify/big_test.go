package notify_test

import (
	"bytes"
	"context"
	"github.com/tripleo-go/agent/internal/deadline"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/notify"
)

// A hook result of a few MB, read from a file (as 55-heat-config's
// caller may give it), is signalled trimmed, as signal.Encode trims the
// decoded result.
func TestBigResult(t *testing.T) {
	if testing.Short() {
		t.Skip("a few MB of hook output")
	}
	c := newCloud(t, 0)
	path := writeDeployment(t, `{"name": "deploy_signal_id", "value": "`+c.srv.URL+`/url/big"}`)
	var out strings.Builder
	for i := range 60000 {
		out.WriteString(strings.Repeat("é\"\\ ", i%7) + "line of output\n")
	}
	result := jsondoc.NewObject(3)
	result.Set("deploy_stdout", out.String())
	result.Set("deploy_stderr", "failed at the end\n")
	result.Set("deploy_status_code", jsondoc.Int(6))
	in := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(in, []byte(jsondoc.Dumps(result)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	if err := notify.Run(context.Background(), []string{path}, notify.Env{Stdin: f, Stderr: &stderr,
		Environ: []string{deadline.NotifyRetryVar + "=1"}}); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	body, _ := signal.Encode(result, signal.MaxBody)
	reqs := c.requests()
	if len(reqs) != 1 || reqs[0] != "POST /url/big application/json "+string(body) {
		t.Errorf("%d requests; the body is not the %d trimmed bytes of a %d-byte result", len(reqs), len(body), jsondoc.DumpsLen(result))
	}
}
