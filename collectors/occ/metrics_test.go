package occ

import (
	"context"
	"errors"
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
// left in HEAT_CONFIG_DEPLOYED.
func TestPassWritesMetrics(t *testing.T) {
	a := &fake{entries: []collectors.Entry{{Name: "a", Content: doc(`{"x": 1}`)}}}
	b := &fake{err: collectors.Unavailable(errors.New("503 Service Unavailable"))}
	r, dir := fakeRunner(t, map[string]*fake{"local": a, "request": b}, "local", "request")
	deployed := filepath.Join(dir, "deployed")
	os.Mkdir(deployed, 0o700)
	os.WriteFile(filepath.Join(deployed, "d1.json"), []byte(`{"id": "d1", "name": "one", "group": "script"}`), 0o600)
	agentstate.Write(filepath.Join(deployed, "d1.signal.json"), agentstate.Signal{Version: 1, StatusCode: "0", Transport: "CFN_SIGNAL", Result: "failed", NotifyExit: 1})
	r.env.Environ = []string{agentstate.DeployedVar + "=" + deployed}
	r.env.StatusDir = filepath.Join(dir, "run")
	r.cfg.MetricsFile = filepath.Join(dir, "tripleo-agent.prom")
	r.pass(context.Background())
	changed := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(r.cache.Path("a"), changed, changed)
	r.pass(context.Background()) // nothing new
	data, err := os.ReadFile(r.cfg.MetricsFile)
	if err != nil {
		t.Fatal(err)
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
