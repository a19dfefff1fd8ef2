package heatconfig

import (
	"context"
	"fmt"
	"github.com/tripleo-go/agent/internal/deadline"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/internal/testkit/qemu"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/notify"
)

// asNotify makes the test binary heat-config-notify itself (the real
// one, notify.Run), after it wrote the token cache's entries as it found
// them to $CALLS/cache-at-notify: HEAT_CONFIG_NOTIFY names the binary.
const asNotify = "HEATCONFIG_TEST_AS_NOTIFY"

func TestMain(m *testing.M) {
	if os.Getenv(asNotify) != "" {
		os.Exit(playNotify())
	}
	os.Exit(m.Run())
}

func playNotify() int {
	entries, _ := filepath.Glob(filepath.Join(os.Getenv(signal.TokenCacheVar), "token-*.json"))
	calls := os.Getenv("CALLS")
	if err := os.WriteFile(filepath.Join(calls, "cache-at-notify"), []byte(fmt.Sprint(len(entries))), 0o600); err != nil {
		return 99
	}
	stamp(filepath.Join(calls, "notify-start"))
	env := notify.ProcessEnv()
	// Hands off the host: without the variable, the program's default
	// (signal.DefaultTokenCache, under /var/cache) is the test's own.
	env.TokenCache = filepath.Join(calls, "default-tokens")
	err := notify.Run(context.Background(), os.Args[1:], env)
	stamp(filepath.Join(calls, "notify-end"))
	return exitcode.Of(err)
}

// stamp writes the time to path, in nanoseconds.
func stamp(path string) { os.WriteFile(path, []byte(fmt.Sprint(time.Now().UnixNano())), 0o600) }

// stamped reads what stamp (or `date +%s%N`) wrote.
func stamped(t *testing.T, path string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	var ns int64
	if _, serr := fmt.Sscan(string(b), &ns); err != nil || serr != nil {
		t.Fatalf("%s: %v %v", path, err, serr)
	}
	return time.Unix(0, ns)
}

// cloud is Keystone (keystonetest, counting authentications, each taking
// authDelay, as on the lab; or never answering when hang) and a Heat API
// that records the signals it gets.
type cloud struct {
	ks        *keystonetest.Server
	srv       *httptest.Server
	authDelay time.Duration
	hang      bool

	mu      sync.Mutex
	signals int
}

func newCloud(t *testing.T) *cloud {
	c := &cloud{ks: keystonetest.New("pa55word")}
	release := make(chan struct{})
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/identity") {
			if r.Method == http.MethodPost {
				if c.hang {
					// The body read, the server sees the client go.
					io.Copy(io.Discard, r.Body)
					select {
					case <-r.Context().Done():
					case <-release:
					}
					return
				}
				time.Sleep(c.authDelay)
			}
			c.ks.ServeHTTP(w, r)
			return
		}
		if !c.ks.Valid(r.Header.Get("X-Auth-Token")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		c.mu.Lock()
		c.signals++
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	t.Cleanup(func() { close(release) }) // first: a hanging answer ends
	c.ks.BaseURL = c.srv.URL
	c.ks.SetCatalog(map[string]string{"orchestration": c.srv.URL + "/heat/v1/pid"})
	return c
}

func (c *cloud) signalled() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.signals
}

// heatDep is a HEAT_SIGNAL deployment of group with password, as Heat
// derives its inputs.
func (c *cloud) heatDep(id, group, password string) string {
	return signalDep(id, group, "deploy_signal_transport", "HEAT_SIGNAL", "deploy_auth_url", c.srv.URL+"/identity/v3",
		"deploy_user_id", "uid", "deploy_password", password, "deploy_project_id", "pid",
		"deploy_stack_id", "stk/cccc", "deploy_resource_name", "the_resource")
}

// signalDep is a deployment with the given string inputs, name, value.
func signalDep(id, group string, inputs ...string) string {
	items := []string{`{"name": "deploy_action", "type": "String", "value": "CREATE"}`}
	for i := 0; i < len(inputs); i += 2 {
		items = append(items, fmt.Sprintf(`{"name": %q, "type": "String", "value": %q}`, inputs[i], inputs[i+1]))
	}
	return fmt.Sprintf(`{"id": %q, "name": "name-%s", "group": %q, "config": "c", "inputs": [%s], "outputs": [], "options": null}`,
		id, id, group, strings.Join(items, ", "))
}

// realNotify makes n's heat-config-notify the real one, its token cache
// in cache ("" leaves the variable unset: the cache is then notified/
// default-tokens, in place of the program's default on the host).
func (n *node) realNotify(t *testing.T, cache string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under make cross-test the test binary is foreign: the emulator runs it.
	n.script(filepath.Join(n.dir, "notify"), "#!/bin/sh\n"+qemu.ShellExec(exe)+"\n")
	n.extraEnv = append(n.extraEnv, asNotify+"=1", deadline.NotifyRetryVar+"=2")
	if cache != "" {
		n.extraEnv = append(n.extraEnv, signal.TokenCacheVar+"="+cache)
	}
}
