package torture

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// signals counts, per deployment id, the signals Heat would get (the
// TempURL PUTs of heat-config-notify).
type signals struct {
	mu  sync.Mutex
	got map[string]int
}

func (s *signals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.got[strings.TrimPrefix(r.URL.Path, "/signal/")]++
	s.mu.Unlock()
}

func (s *signals) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.got {
		out[k] = v
	}
	return out
}

// TestKillHeatConfig kills 55-heat-config (its whole process group: the
// hooks and heat-config-notify too, as a crash or a power cut would) at a
// random instant of a run of ten script deployments, then runs it again
// to completion. Every deployment must have run at most once and been
// signalled.
func TestKillHeatConfig(t *testing.T) {
	n := trials(t) / 2
	if os.Getenv("TORTURE_OS_APPLY_CONFIG") != "" {
		t.Skip("TORTURE_OS_APPLY_CONFIG: os-apply-config only")
	}
	bin := filepath.Dir(build(t))
	for _, name := range []string{"55-heat-config", "heat-config-notify", "script"} {
		if err := os.Symlink("tripleo-agent", filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	hooks := t.TempDir()
	if err := os.Symlink(filepath.Join(bin, "script"), filepath.Join(hooks, "script")); err != nil {
		t.Fatal(err)
	}
	sink := &signals{got: map[string]int{}}
	srv := httptest.NewServer(sink)
	defer srv.Close()

	const count = 10
	var ids []string
	var items []map[string]any
	for i := range count {
		id := fmt.Sprintf("d%02d", i)
		ids = append(ids, id)
		items = append(items, map[string]any{
			"id": id, "name": "deployment-" + id, "group": "script", "outputs": []any{}, "options": nil,
			"config": "#!/bin/sh\necho run >> \"$RUNS/" + id + "\"\nsleep 0.02\n",
			"inputs": []any{
				map[string]any{"name": "deploy_signal_id", "type": "String", "value": srv.URL + "/signal/" + id},
				map[string]any{"name": "deploy_signal_verb", "type": "String", "value": "PUT"},
				map[string]any{"name": "deploy_signal_transport", "type": "String", "value": "TEMP_URL_SIGNAL"},
			},
		})
	}
	doc, _ := json.Marshal(items)

	var interrupted, resent int
	for trial := range n {
		work := t.TempDir()
		runs := filepath.Join(work, "runs")
		os.Mkdir(runs, 0o755)
		conf := filepath.Join(work, "heat-config")
		os.WriteFile(conf, doc, 0o600)
		env := append(os.Environ(), "HEAT_SHELL_CONFIG="+conf, "HEAT_CONFIG_DEPLOYED="+filepath.Join(work, "deployed"),
			"HEAT_CONFIG_DEPLOYED_OLD="+filepath.Join(work, "old"), "HEAT_CONFIG_HOOKS="+hooks,
			"HEAT_CONFIG_NOTIFY="+filepath.Join(bin, "heat-config-notify"), "HEAT_SCRIPT_WORKING="+filepath.Join(work, "scripts"),
			"HEAT_SCRIPT_OUTPUTS="+filepath.Join(work, "outputs"), "RUNS="+runs)
		sink.mu.Lock()
		sink.got = map[string]int{}
		sink.mu.Unlock()

		first := exec.Command(filepath.Join(bin, "55-heat-config"))
		first.Env, first.SysProcAttr = env, &syscall.SysProcAttr{Setpgid: true}
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		// ten deployments take about 0.5 s
		time.Sleep(time.Duration(rand.Int64N(int64(600 * time.Millisecond))))
		syscall.Kill(-first.Process.Pid, syscall.SIGKILL)
		first.Wait()
		if m, _ := filepath.Glob(filepath.Join(work, "deployed", "*.inflight")); len(m) > 0 {
			interrupted++
		}

		second := exec.Command(filepath.Join(bin, "55-heat-config"))
		second.Env = env
		if out, err := second.CombinedOutput(); err != nil {
			t.Fatalf("trial %d: the run after the kill: %v\n%s", trial, err, out)
		}
		got := sink.snapshot()
		for _, id := range ids {
			b, _ := os.ReadFile(filepath.Join(runs, id))
			if r := strings.Count(string(b), "run"); r > 1 {
				t.Errorf("trial %d: %s ran %d times", trial, id, r)
			}
			if got[id] == 0 {
				t.Errorf("trial %d: %s was never signalled", trial, id)
			}
			if got[id] > 1 {
				resent++ // killed while its signal was in flight: sent again
			}
		}
		if m, _ := filepath.Glob(filepath.Join(work, "deployed", "*.inflight")); len(m) > 0 {
			t.Errorf("trial %d: in-flight markers left after a complete run: %v", trial, m)
		}
	}
	t.Logf("TORTURE 55-heat-config: %d kills of a 10-deployment run; %d cut a deployment short, all signalled on the next run, none ran twice; %d signals sent twice (killed while one was in flight)",
		n, interrupted, resent)
}
