package metrics

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// node is a node with a bit of everything: a source up, one down, one
// not configured; a failed command; deployments that succeeded, failed
// (one superseded), were not signalled (their signal failed, or the pass
// ended without one), one running and one from before signal records.
func node() State {
	sig := func(code, result string) *agentstate.Signal {
		return &agentstate.Signal{Version: 1, At: t0, StatusCode: code, Transport: "CFN_SIGNAL", Result: result}
	}
	return State{
		Pass: agentstate.Pass{Version: 1, Started: t0, Ended: t0.Add(2500 * time.Millisecond), Converged: false,
			Collectors: []agentstate.Collector{{Name: "heat", Result: "ok"}, {Name: "local", Result: "degraded", Reason: `a "bad" file`},
				{Name: "ec2", Result: "not-configured"}}},
		LastChange: map[string]time.Time{"heat": t0.Add(-time.Hour)},
		Command:    &agentstate.Command{Command: "os-refresh-config", Started: t0.Add(time.Second), Seconds: 1.25, Exit: 1},
		Deployments: []agentstate.Deployment{
			{ID: "1", Name: "a", Signal: sig("3", "sent")},
			{ID: "2", Name: "a", Signal: sig("0", "sent")},
			{ID: "3", Name: "b", Signal: sig("1", "sent")},
			{ID: "4", Name: "c", Signal: sig("0", "failed")},
			{ID: "5", Name: "d", Started: t0.Add(time.Second)},
			{ID: "6", Name: "e", Started: t0.Add(time.Minute)},
			{ID: "7", Name: "f", Started: t0.Add(-time.Hour)},
		},
	}
}

// The file is the golden one: every family with its HELP and TYPE, the
// deployments counted on the latest of each name.
func TestGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, Families(node())); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "node.prom")
	if *update {
		os.WriteFile(golden, b.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("got:\n%s\nwant (%s):\n%s", b.String(), golden, want)
	}
}

// promtool, Prometheus's own checker, accepts the file, for a busy node
// and for one that has not run a command or a deployment yet.
func TestPromtool(t *testing.T) {
	tool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatal("promtool (Debian's prometheus package) is required: scripts/install-deps.sh")
		}
		t.Skip("no promtool (Debian's prometheus package)")
	}
	fresh := State{Pass: agentstate.Pass{Started: t0, Ended: t0, Converged: true, Collectors: []agentstate.Collector{{Name: "heat", Result: "unavailable"}}}}
	for name, st := range map[string]State{"busy": node(), "fresh": fresh} {
		path := filepath.Join(t.TempDir(), "tripleo-agent.prom")
		if err := WriteFile(path, Families(st)); err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(path)
		cmd := exec.Command(tool, "check", "metrics")
		cmd.Stdin = f
		out, err := cmd.CombinedOutput()
		f.Close()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}
}

// The file is replaced whole and readable by node_exporter's user; what
// was staged is gone.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tripleo-agent.prom")
	for range 2 {
		if err := WriteFile(path, Families(node())); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	fi, err := os.Stat(path)
	if len(entries) != 1 || err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("%d files, %v (%v): want the file alone, 0644", len(entries), fi.Mode(), err)
	}
}

// Label values and help are escaped as the format says.
func TestEscape(t *testing.T) {
	var b bytes.Buffer
	Write(&b, []Family{{Name: "x", Help: "a\\b\nc", Type: "gauge", Samples: []Sample{{Labels: [][2]string{{"l", "q\"\\\n"}}, Value: 0.5}}}})
	want := "# HELP x a\\\\b\\nc\n# TYPE x gauge\nx{l=\"q\\\"\\\\\\n\"} 0.5\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
