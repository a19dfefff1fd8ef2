package install

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// signals records what a stand-in for heat-api-cfn and Swift received.
type signals struct {
	mu   sync.Mutex
	reqs []string // "METHOD path body"
}

func (s *signals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.Path+" "+string(body))
	s.mu.Unlock()
	if r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(http.StatusBadRequest)
	}
}

func (s *signals) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// The installed tree, run in place: os-apply-config renders the
// deployments, 55-heat-config runs a script deployment through the
// installed script hook and signals its two outputs by CFN_SIGNAL with
// the installed heat-config-notify, 99-refresh-completed signals the
// os-apply-config deployment by TEMP_URL_SIGNAL (a PUT, which the
// reference could not send); a second pass sends nothing.
func TestChainInPlace(t *testing.T) {
	d := installed(t)
	sig := &signals{}
	srv := httptest.NewServer(sig)
	defer srv.Close()
	out := t.TempDir()
	md := filepath.Join(out, "metadata.json")
	script := "#!/bin/sh\necho \"hello $greeting\"\necho warn >&2\nprintf one > $heat_outputs_path.first\nprintf two > $heat_outputs_path.second\n"
	meta := map[string]any{"deployments": []any{
		map[string]any{"id": "dep-script", "name": "10-script", "group": "script", "config": script,
			"inputs": []any{
				map[string]any{"name": "greeting", "type": "String", "value": "world"},
				map[string]any{"name": "deploy_signal_transport", "type": "String", "value": "CFN_SIGNAL"},
				map[string]any{"name": "deploy_signal_id", "type": "String", "value": srv.URL + "/v1/signal/arn%3Ax?Signature=abc%2B"},
				map[string]any{"name": "deploy_signal_verb", "type": "String", "value": "POST"}},
			"outputs": []any{map[string]any{"name": "first"}, map[string]any{"name": "second"}}, "options": nil},
		map[string]any{"id": "dep-oac", "name": "20-data", "group": "os-apply-config", "config": map[string]any{"x": 1},
			"inputs": []any{
				map[string]any{"name": "deploy_signal_transport", "type": "String", "value": "TEMP_URL_SIGNAL"},
				map[string]any{"name": "deploy_signal_id", "type": "String", "value": srv.URL + "/v1/AUTH_p/c/o?temp_url_sig=s&temp_url_expires=1"},
				map[string]any{"name": "deploy_signal_verb", "type": "String", "value": "PUT"}}},
	}}
	b, _ := json.Marshal(meta)
	os.WriteFile(md, b, 0o600)
	run := func(prog string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(d, prog), args...)
		cmd.Env = env(d, []string{"OS_CONFIG_FILES=" + md,
			"HEAT_SHELL_CONFIG=" + filepath.Join(out, "var/run/heat-config/heat-config"),
			"HEAT_CONFIG_DEPLOYED=" + filepath.Join(out, "deployed"),
			"HEAT_SCRIPT_WORKING=" + filepath.Join(out, "script-working"),
			"HEAT_SCRIPT_OUTPUTS=" + filepath.Join(out, "script-outputs"),
			"OS_APPLY_CONFIG_DEPLOYED=" + filepath.Join(out, "oac-deployed")}...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, b)
		}
		return string(b)
	}
	run("usr/bin/os-apply-config", "--output", out)
	log := run("usr/libexec/os-refresh-config/configure.d/55-heat-config")
	log += run("usr/libexec/os-refresh-config/post-configure.d/99-refresh-completed")
	got := sig.all()
	if len(got) != 2 {
		t.Fatalf("signals %q\nlog:\n%s", got, log)
	}
	var data map[string]any
	if !strings.HasPrefix(got[0], "POST /v1/signal/arn:x ") || json.Unmarshal([]byte(strings.SplitN(got[0], " ", 3)[2]), &data) != nil ||
		data["first"] != "one" || data["second"] != "two" || data["deploy_stdout"] != "hello world\n" ||
		data["deploy_stderr"] != "warn\n" || data["deploy_status_code"] != float64(0) {
		t.Errorf("script signal %q", got[0])
	}
	if want := `PUT /v1/AUTH_p/c/o {"deploy_stdout": "os-apply-config deployment dep-oac completed", "deploy_status_code": "0"}`; got[1] != want {
		t.Errorf("os-apply-config signal %q, want %q", got[1], want)
	}
	for _, secret := range []string{"abc", "temp_url_sig=s"} {
		if strings.Contains(log, secret) {
			t.Errorf("%q in the log:\n%s", secret, log)
		}
	}
	run("usr/libexec/os-refresh-config/configure.d/55-heat-config")
	run("usr/libexec/os-refresh-config/post-configure.d/99-refresh-completed")
	if n := len(sig.all()); n != 2 {
		t.Errorf("a second pass signalled again: %q", sig.all()[2:])
	}
}
