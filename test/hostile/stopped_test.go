package hostile

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/status"
)

// A configuration that stops os-collect-config, as tripleo-agent-status
// tells it: both programs in this process, each on its own records (the
// programs do not import each other, so the test lives here): a healthy
// pass, then a configuration that stops os-collect-config at start-up
// ("collectors = local,heat" on one line), deployments that failed with
// 127; then the configuration fixed and a pass.
func TestStatusTellsWhatStoppedTheDaemon(t *testing.T) {
	dir := t.TempDir()
	statusDir, deployedDir := filepath.Join(dir, "run"), filepath.Join(dir, "deployed")
	os.MkdirAll(dir+"/local", 0o755)
	os.MkdirAll(deployedDir, 0o700)
	os.WriteFile(dir+"/local/a.json", []byte(`{"a": 1}`), 0o644)
	conf := filepath.Join(dir, "os-collect-config.conf")
	good := "[DEFAULT]\ncommand = true\ncachedir = " + dir + "/cache\nbackup_cachedir = " + dir + "/backup\ncollectors = local\n[local]\npath = " + dir + "/local\n"
	collect := func(body string, args ...string) int {
		t.Helper()
		os.WriteFile(conf, []byte(body), 0o644)
		env := occ.Env{Stdout: io.Discard, Stderr: io.Discard, StatusDir: statusDir,
			After: func(time.Duration) <-chan time.Time { t.Fatal("the daemon ran"); return nil }}
		return exitcode.Of(occ.Run(context.Background(), append([]string{"--config-file", conf}, args...), env))
	}
	var stdout strings.Builder
	report := func(args ...string) int {
		t.Helper()
		stdout.Reset()
		// An hour's --wait would hang the test: the context bounds it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		env := status.Env{Stdout: &stdout, Stderr: io.Discard, Poll: 10 * time.Millisecond,
			Environ: []string{agentstate.DirVar + "=" + statusDir, "HEAT_CONFIG_DEPLOYED=" + deployedDir}}
		code := exitcode.Of(status.Run(ctx, args, env))
		if ctx.Err() != nil {
			t.Fatalf("tripleo-agent-status %q did not return", args)
		}
		return code
	}

	if got := collect(good, "--one-time"); got != 0 {
		t.Fatalf("a good pass: exit %d", got)
	}
	if got := report(); got != status.Healthy {
		t.Fatalf("after a good pass: exit %d\n%s", got, stdout.String())
	}

	if got := collect(strings.Replace(good, "collectors = local", "collectors = local,heat", 1)); got != exitcode.Failure {
		t.Fatalf("the daemon on collectors = local,heat: exit %d", got)
	}
	// Deployments that failed with 127 before (a hook's tool missing).
	deployment(t, deployedDir, "d1", "one", "127")
	deployment(t, deployedDir, "d2", "two", "0")
	for _, args := range [][]string{nil, {"--wait", "--timeout", "3600"}} {
		if got := report(args...); got != status.Degraded {
			t.Errorf("%q: exit %d, want %d (docs/status.md: degraded)", args, got, status.Degraded)
		}
		out := stdout.String()
		for _, want := range []string{"status: degraded\n", "\nreason: config: os-collect-config stopped at ",
			"Unknown collectors ['local,heat']", "The collectors option takes one name per line", "\nreason: deployment one: status code 127\n",
			"  d1 one [script] status 127 (failed), "} {
			if !strings.Contains(out, want) {
				t.Errorf("%q: the text lacks %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "is os-collect-config running?") {
			t.Errorf("%q: the text asks whether it runs:\n%s", args, out)
		}
	}
	report("--format", "json")
	var rep struct {
		Health   string
		Problems []struct{ Kind, Name, Reason string }
		Stopped  *struct {
			Cause, Error string
			Exit         int
		}
		Deployments []struct{ ID, Outcome, Problem string }
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Health != "degraded" || len(rep.Problems) != 2 || rep.Problems[0].Kind != "config" || !strings.Contains(rep.Problems[0].Reason, "local,heat") ||
		rep.Stopped == nil || rep.Stopped.Cause != "configuration" || rep.Stopped.Exit != 1 || !strings.Contains(rep.Stopped.Error, "one name per line") ||
		len(rep.Deployments) != 2 || rep.Deployments[0].Outcome != "failed" || rep.Deployments[0].Problem != "status code 127" || rep.Deployments[1].Outcome != "succeeded" {
		t.Errorf("json:\n%s", stdout.String())
	}

	os.WriteFile(dir+"/local/a.json", []byte(`{"a": 2}`), 0o644)
	if got := collect(good, "--one-time"); got != 0 {
		t.Fatalf("the configuration fixed: exit %d", got)
	}
	report()
	if out := stdout.String(); strings.Contains(out, "reason: config:") || !strings.Contains(out, "reason: deployment one: status code 127\n") {
		t.Errorf("after a good pass the stop is gone, the failed deployment stays:\n%s", out)
	}
	os.Remove(filepath.Join(deployedDir, "d1.signal.json"))
	os.Remove(filepath.Join(deployedDir, "d1.json"))
	if got := report(); got != status.Healthy {
		t.Errorf("exit %d\n%s", got, stdout.String())
	}
}

// deployment leaves what 55-heat-config leaves for a deployment it ran an
// hour ago and signalled with code.
func deployment(t *testing.T, dir, id, name, code string) {
	t.Helper()
	at := time.Now().Add(-time.Hour)
	path := filepath.Join(dir, id+".json")
	os.WriteFile(path, []byte(`{"id": "`+id+`", "name": "`+name+`", "group": "script", "inputs": []}`), 0o600)
	os.Chtimes(path, at, at)
	if err := agentstate.Write(filepath.Join(dir, id+".signal.json"),
		agentstate.Signal{Version: 1, At: at, StatusCode: code, Transport: "CFN_SIGNAL", Result: "sent"}); err != nil {
		t.Fatal(err)
	}
}
