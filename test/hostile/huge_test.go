package hostile

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// huge is a value of 100 MB.
const huge = 100 << 20

func hugeString() string { return strings.Repeat("h", huge) }

// Values of 100 MB: what a program can hold is rendered, stored or
// signalled (trimmed to what Heat accepts); what exceeds a documented
// bound (an HTTP body over max_metadata_bytes, a hook's stdin over 64 MiB)
// is one line and the previous state stands.
func TestHugeStrings(t *testing.T) {
	agent.Dir(t) // skips under -short, before 100 MB are made
	value := hugeString()
	runInputCases(t, []inputCase{
		{name: "os-apply-config renders it", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/md.json", string(mustJSON(map[string]string{"x": value})), 0o644)
			write(t, w+"/t/etc/foo", "x={{x}}\n", 0o644)
			return nil, nil, "os-apply-config", []string{"-t", w + "/t", "-o", w + "/out", "-m", w + "/md.json"}
		}, code: 0, word: "[ERROR]", writes: []string{"out/"},
			check: func(t *testing.T, w string, r result) {
				if st, err := os.Stat(w + "/out/etc/foo"); err != nil || st.Size() != huge+3 {
					t.Errorf("rendered file: %v %v", st, err)
				}
			}},
		{name: "os-collect-config stores a local one", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			write(t, w+"/local/big", string(mustJSON(map[string]string{"x": value})), 0o600)
			return occEnv(w), nil, "os-collect-config", occArgs(w, "local")
		}, code: 0, word: "rror", writes: []string{"cache/", "backup/", "status/"},
			check: func(t *testing.T, w string, r result) {
				if st, err := os.Stat(w + "/cache/big.json.last"); err != nil || st.Size() < huge {
					t.Errorf("committed cache file: %v %v", st, err)
				}
			}},
		{name: "heat-config-notify trims it to what Heat takes", setup: func(t *testing.T, w string) ([]string, []byte, string, []string) {
			url := signals(t, w)
			write(t, w+"/d.json", string(mustJSON(map[string]any{"id": "d", "group": "script", "inputs": []any{
				map[string]any{"name": "deploy_signal_id", "value": url + "/d"},
				map[string]any{"name": "deploy_signal_verb", "value": "PUT"}}})), 0o600)
			return nil, mustJSON(map[string]any{"deploy_stdout": value + "THE END", "deploy_status_code": 0}), "heat-config-notify", []string{w + "/d.json"}
		}, code: 0, word: "[WARNING]", errLine: "over the limit of 950000: trimmed from the start of deploy_stdout", writes: []string{"signal-d"}, check: func(t *testing.T, w string, r result) {
			body, err := os.ReadFile(w + "/signal-d")
			if err != nil || len(body) > 950000 || !bytes.Contains(body, []byte("THE END")) {
				t.Errorf("signal body of %d bytes (err %v), want at most 950000 ending with the output's tail", len(body), err)
			}
		}},
	})
}

// A metadata document over max_metadata_bytes makes its source
// unavailable for the pass with one line; the cache keeps the last good
// document and the command does not run.
func TestHugeMetadataKeepsTheLastGood(t *testing.T) {
	agent.Dir(t)
	w := t.TempDir()
	var big atomic.Bool
	small := []byte(`{"small": true}`)
	bigDoc := mustJSON(map[string]string{"x": hugeString()})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if big.Load() {
			rw.Write(bigDoc)
			return
		}
		rw.Write(small)
	}))
	defer srv.Close()
	args := []string{"--config-file", "/dev/null", "--one-time", "--cachedir", w + "/cache", "--backup-cachedir", w + "/backup",
		"--request-metadata-url", srv.URL, "-c", "echo ran >> " + w + "/ran", "request"}
	if r := run(t, occEnv(w), nil, "os-collect-config", args...); r.code != 0 {
		t.Fatalf("first pass: exit %d\n%s", r.code, r.stderr)
	}
	committed := read(t, w+"/cache/request.json.last")
	big.Store(true)
	r := run(t, occEnv(w), nil, "os-collect-config", args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, tail(r.stderr))
	}
	if l := r.lines("response body over the size limit (67108864 bytes, max_metadata_bytes in [DEFAULT], --max-metadata-bytes)"); len(l) != 1 || !strings.Contains(l[0], srv.URL) {
		t.Errorf("lines %q\n%s", l, tail(r.stderr))
	}
	if got := read(t, w+"/cache/request.json.last"); got != committed || read(t, w+"/cache/request.json") != committed {
		t.Errorf("the cache changed: %q", got)
	}
	if got := read(t, w+"/ran"); got != "ran\n" {
		t.Errorf("the command ran %q", got)
	}
}

// A deployment of 100 MB (its config) is more than a hook reads on its
// stdin: the hook says so on one line, the deployment is signalled
// failed, the next one runs; 55-heat-config exits 0.
func TestHugeDeployment(t *testing.T) {
	agent.Dir(t)
	w := t.TempDir()
	url := signals(t, w)
	hookDir(t, w, "script")
	dep := func(id, config string) map[string]any {
		return map[string]any{"id": id, "group": "script", "config": config, "inputs": []any{
			map[string]any{"name": "deploy_signal_id", "value": url + "/" + id},
			map[string]any{"name": "deploy_signal_verb", "value": "PUT"}}}
	}
	write(t, w+"/heat-config", string(mustJSON([]any{dep("big", "#!/bin/sh\n#"+hugeString()), dep("next", "#!/bin/sh\necho next ran")})), 0o600)
	env := append(hcEnv(w), "HEAT_CONFIG_NOTIFY="+agent.Dir(t)+"/heat-config-notify")
	r := run(t, env, nil, "55-heat-config")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, tail(r.stderr))
	}
	if l := r.lines("more than 67108864 bytes on stdin"); len(l) != 1 {
		t.Errorf("lines %q\n%s", short(l), tail(r.stderr))
	}
	var big, next struct {
		Code   int    `json:"deploy_status_code"`
		Stdout string `json:"deploy_stdout"`
	}
	json.Unmarshal([]byte(read(t, w+"/signal-big")), &big)
	json.Unmarshal([]byte(read(t, w+"/signal-next")), &next)
	if big.Code == 0 || next.Code != 0 || next.Stdout != "next ran\n" {
		t.Errorf("signals: big %+v, next %+v", big, next)
	}
}

// signals serves TempURL-style PUT signals and keeps each body in
// w/signal-<last path segment>.
func signals(t *testing.T, w string) string {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		os.WriteFile(w+"/signal-"+name, body, 0o600)
		rw.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
