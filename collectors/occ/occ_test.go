package occ

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
)

// fake is a collector whose answer the test sets.
type fake struct {
	entries []collectors.Entry
	err     error
}

func (f *fake) Collect(context.Context) ([]collectors.Entry, error) { return f.entries, f.err }

// fakeConfig is the configuration of a fake: no options, the fake itself.
type fakeConfig struct{ f *fake }

func (c fakeConfig) Options() []config.Option { return nil }

func (c fakeConfig) New(collectors.Globals, *slog.Logger) (collectors.Collector, error) {
	return c.f, nil
}

func doc(s string) jsondoc.Value {
	v, err := jsondoc.Loads([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

func fakeRunner(t *testing.T, sources map[string]*fake, order ...string) (*runner, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &Config{
		Command:        `echo "$OS_CONFIG_FILES" >> ` + dir + `/calls`,
		CacheDir:       dir + "/cache",
		BackupCacheDir: dir + "/backup",
		Collectors:     order,
		OneTime:        true,
		Sources:        map[string]collectors.Config{},
	}
	for name, f := range sources {
		cfg.Sources[name] = fakeConfig{f}
	}
	return newRunner(cfg, Env{Stdout: io.Discard, Stderr: io.Discard}, logging.Discard), dir
}

func calls(t *testing.T, dir string) []string {
	b, _ := os.ReadFile(dir + "/calls")
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestRunRefusesUnknownCollector(t *testing.T) {
	var stderr strings.Builder
	err := Run(context.Background(), []string{"--config-file", "/dev/null", "-c", "true", "bogus"}, Env{Stdout: io.Discard, Stderr: &stderr})
	if err == nil || !strings.Contains(stderr.String(), "Unknown collectors ['bogus']") || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
		t.Fatalf("err %v stderr %q", err, stderr.String())
	}
}

// --one-time-timeout bounds a one-time run and names what it waited for.
func TestOneTimeDeadlineNamesTheStage(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		hold       bool
		command    string
	}{
		{"hung command", "it was waiting for the command sleep 30", false, "sleep 30"},
		{"lock held", "it was waiting for the lock on", true, "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(dir+"/local", 0o755)
			os.WriteFile(dir+"/local/a", []byte(`{"a": 1}`), 0o644)
			if tc.hold {
				os.Mkdir(dir+"/cache", 0o700)
				h, _ := os.Open(dir + "/cache")
				defer h.Close()
				syscall.Flock(int(h.Fd()), syscall.LOCK_EX)
			}
			var stderr strings.Builder
			start := time.Now()
			err := Run(context.Background(), []string{"--config-file", "/dev/null", "--one-time", "--one-time-timeout", "0.5",
				"-c", tc.command, "--cachedir", dir + "/cache", "--backup-cachedir", dir + "/backup", "--local-path", dir + "/local", "local"},
				Env{Stdout: io.Discard, Stderr: &stderr})
			if err == nil || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("err %v, stderr %q", err, stderr.String())
			}
			if time.Since(start) > 15*time.Second {
				t.Fatal("the deadline did not stop the run")
			}
		})
	}
}

// records keeps what a logger was given.
type records struct {
	mu  sync.Mutex
	got []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }

func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, r)
	return nil
}

func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *records) WithGroup(string) slog.Handler { return h }

// messages are the records' messages, a line each.
func (h *records) messages() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.got {
		out = append(out, r.Message)
	}
	return strings.Join(out, "\n")
}

// events are the journal-only records, each as "msg k=v k=v" with the
// command's duration left out.
func (h *records) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.got {
		if r.Level != logging.LevelEvent {
			continue
		}
		line := r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "command_seconds" {
				if _, err := strconv.ParseFloat(a.Value.String(), 64); err != nil {
					line += " bad-seconds=" + a.Value.String()
				}
				return true
			}
			line += " " + a.Key + "=" + a.Value.String()
			return true
		})
		out = append(out, line)
	}
	return out
}

// No secret reaches a log line at any level: passwords and keys from the
// configuration, and the signature of a temporary URL, through a run with
// --debug where the server fails.
func TestSecretsNeverLogged(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no "+r.URL.RawQuery, http.StatusInternalServerError)
	}))
	defer srv.Close()
	conf := dir + "/occ.conf"
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+"/backup\n"+
		"[cfn]\naccess_key_id = AKIDPUBLIC\nsecret_access_key = S3CRET-cfn\nmetadata_url = http://127.0.0.1:1/v1/\n"+
		"[heat]\npassword = S3CRET-heat\nuser_id = u\nproject_id = p\nauth_url = http://127.0.0.1:1/v3\n"+
		"[zaqar]\npassword = S3CRET-zaqar\n"+
		"[request]\nmetadata_url = "+srv.URL+"/m?temp_url_sig=S3CRET-sig&temp_url_expires=1\ntimeout = 2\n"), 0o644)
	var stderr strings.Builder
	Run(context.Background(), []string{"--config-file", conf, "--debug", "--one-time", "cfn", "heat", "zaqar", "request"},
		Env{Stdout: io.Discard, Stderr: &stderr})
	if !strings.Contains(stderr.String(), "Source [request] Unavailable.") {
		t.Fatalf("the run did not try the request collector:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "S3CRET") {
		t.Fatalf("a secret in the log:\n%s", stderr.String())
	}
	// The attributes, which become journal fields, too.
	cfg, err := Parse([]string{"--config-file", conf, "--one-time", "cfn", "heat", "zaqar", "request"}, config.Env{})
	if err != nil {
		t.Fatal(err)
	}
	h := &records{}
	newRunner(cfg, Env{Stdout: io.Discard, Stderr: io.Discard}, slog.New(h)).pass(context.Background())
	var all strings.Builder
	for _, rec := range h.got {
		all.WriteString(rec.Message)
		rec.Attrs(func(a slog.Attr) bool { all.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
		all.WriteString("\n")
	}
	if !strings.Contains(all.String(), "reason=") || strings.Contains(all.String(), "S3CRET") {
		t.Fatalf("records:\n%s", all.String())
	}
}
