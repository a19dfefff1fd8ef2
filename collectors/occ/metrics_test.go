package occ

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/agentstate"
)

// metrics-file is off by default, and set from [DEFAULT] or the command
// line.
func TestMetricsFileOption(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "os-collect-config.conf")
	os.WriteFile(conf, []byte("[DEFAULT]\nmetrics_file = /var/lib/prometheus/node-exporter/tripleo-agent.prom\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config-file", "/dev/null"}, ""},
		{[]string{"--config-file", conf}, "/var/lib/prometheus/node-exporter/tripleo-agent.prom"},
		{[]string{"--config-file", conf, "--metrics-file", "/tmp/x.prom"}, "/tmp/x.prom"},
	} {
		c, err := Parse(tc.args, config.Env{})
		if err != nil || c.MetricsFile != tc.want {
			t.Errorf("%v: %q (%v), want %q", tc.args, c.MetricsFile, err, tc.want)
		}
	}
}

// Each pass replaces the metrics file: the pass, each configured source
// (its last change is its cache file's time), the last command, which a
// pass with nothing new keeps showing, and the deployments heat-config
// left in HEAT_CONFIG_DEPLOYED. What a killed pass staged is removed.
func TestPassWritesMetrics(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	b := &fake{err: collectors.Unavailable(errors.New("503 Service Unavailable"))}
	r, dir := fakeRunner(t, map[string]*fake{"local": a, "request": b}, "local", "request")
	deployed := filepath.Join(dir, "deployed")
	os.Mkdir(deployed, 0o700)
	os.WriteFile(filepath.Join(deployed, "d1.json"), []byte(`{"id": "d1", "name": "one", "group": "script"}`), 0o600)
	agentstate.Write(filepath.Join(deployed, "d1.signal.json"), agentstate.Signal{Version: 1, StatusCode: "0", Transport: "CFN_SIGNAL", Result: "failed", NotifyExit: 1})
	r.env.Environ = []string{"HEAT_CONFIG_DEPLOYED" + "=" + deployed}
	r.env.StatusDir = filepath.Join(dir, "run")
	r.cfg.MetricsFile = filepath.Join(dir, "prom", "tripleo-agent.prom")
	os.Mkdir(filepath.Dir(r.cfg.MetricsFile), 0o755)
	staged := filepath.Join(dir, "prom", ".tripleo-agent.prom.123") // a killed pass's
	os.WriteFile(staged, nil, 0o600)
	longAgo := time.Now().Add(-time.Hour)
	os.Chtimes(staged, longAgo, longAgo)
	r.pass(context.Background())
	changed := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(r.cache.Path("a"), changed, changed)
	r.pass(context.Background()) // nothing new
	data, err := os.ReadFile(r.cfg.MetricsFile)
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(r.cfg.MetricsFile)); len(entries) != 1 {
		t.Errorf("%d files in the textfile directory, want the metrics file alone", len(entries))
	}
	for _, want := range []string{
		"# TYPE tripleo_agent_pass_last_timestamp_seconds gauge\n",
		"\ntripleo_agent_pass_last_converged 1\n",
		"\ntripleo_agent_source_up{source=\"local\"} 1\n",
		"\ntripleo_agent_source_up{source=\"request\"} 0\n",
		"\ntripleo_agent_source_last_change_timestamp_seconds{source=\"local\"} " + strconv.FormatInt(changed.Unix(), 10) + "\n",
		"\ntripleo_agent_command_last_exit_code 0\n",
		"\ntripleo_agent_deployments{status=\"unsignalled\"} 1\n",
		"\ntripleo_agent_deployment_signal_failures 1\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("no %q in:\n%s", want, data)
		}
	}
}

// A metrics file that cannot be written (node_exporter is not installed:
// no directory) warns once, naming the file, and fails nothing.
func TestMetricsFileUnwritableWarnsOnce(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	r, dir := fakeRunner(t, map[string]*fake{"local": a}, "local")
	r.env.Environ = []string{"HEAT_CONFIG_DEPLOYED" + "=" + filepath.Join(dir, "deployed")}
	r.cfg.MetricsFile = filepath.Join(dir, "no-such-dir", "tripleo-agent.prom")
	h := &records{}
	r.log = slog.New(h)
	for range 3 {
		if _, _, err := r.pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	for _, rec := range h.got {
		if strings.Contains(rec.Message, "metrics file") {
			warned = append(warned, rec.Message)
		}
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "Could not write the metrics file "+r.cfg.MetricsFile+": ") {
		t.Errorf("warnings %q, want one naming the file", warned)
	}
}
