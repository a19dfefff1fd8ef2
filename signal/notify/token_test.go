package notify_test

import (
	"bytes"
	"context"
	"github.com/tripleo-go/agent/internal/deadline"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/zaqartest"
	"github.com/tripleo-go/agent/signal"
	"github.com/tripleo-go/agent/signal/notify"
)

// signalled is the POST of a HEAT_SIGNAL to stk/cccc.
const signalled = `POST /heat/v1/pid/stacks/stk/cccc/resources/the_resource/signal application/json {"foo": "bar"}`

// cacheVar points the token cache at dir.
func cacheVar(dir string) []string { return []string{signal.TokenCacheVar + "=" + dir} }

// notifyTwice runs two heat-config-notify processes for path with the
// token cache in dir, calling between() between them; it returns their
// logs, each having succeeded.
func notifyTwice(t *testing.T, path, dir string, between func()) string {
	t.Helper()
	var logs string
	for i := range 2 {
		if i == 1 && between != nil {
			between()
		}
		code, log := run(t, `{"foo": "bar"}`, cacheVar(dir), path)
		if code != 0 {
			t.Fatalf("run %d: status %d, log:\n%s", i+1, code, log)
		}
		logs += log
	}
	if strings.Contains(logs, "pa55word") || strings.Contains(logs, "tok-") {
		t.Fatalf("a secret in the log:\n%s", logs)
	}
	return logs
}

// cacheFile is the one entry of the cache in dir.
func cacheFile(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "token-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache entries %v", files)
	}
	return files[0]
}

// Two signals with the same credentials authenticate once: the second
// process takes the token the first kept, 0600 in a 0700 directory,
// without the password.
func TestTokenKeptForTheNextSignal(t *testing.T) {
	c := newCloud(t, 0)
	dir := filepath.Join(t.TempDir(), "cache", "tokens")
	notifyTwice(t, writeDeployment(t, c.heatInputs("")), dir, nil)
	if n := c.ks.Authentications(); n != 1 {
		t.Errorf("%d authentications for two signals, want 1", n)
	}
	if got := c.requests(); len(got) != 2 || got[0] != signalled || got[1] != signalled {
		t.Errorf("requests %q", got)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, cacheFile(t, dir): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %04o", path, fi.Mode(), err, want)
		}
	}
	if data, _ := os.ReadFile(cacheFile(t, dir)); bytes.Contains(data, []byte("pa55word")) {
		t.Error("the password in the token cache")
	}
}

// A ZAQAR_SIGNAL keeps its token the same way.
func TestZaqarTokenKept(t *testing.T) {
	z := zaqartest.New("q1", "pa55word")
	defer z.Close()
	path := writeDeployment(t, `{"name": "deploy_auth_url", "value": "`+z.AuthURL()+`"}, {"name": "deploy_user_id", "value": "uid"},
		{"name": "deploy_password", "value": "pa55word"}, {"name": "deploy_project_id", "value": "pid"},
		{"name": "deploy_queue_id", "value": "q1"}`)
	notifyTwice(t, path, t.TempDir(), nil)
	if n := z.KS.Authentications(); n != 1 || len(z.Posted()) != 2 {
		t.Errorf("%d authentications, %d posts; want 1, 2", n, len(z.Posted()))
	}
}

// The cache entry depends on every credential: a rotated password
// authenticates again, and each password has its own entry.
func TestNewPasswordAuthenticatesAgain(t *testing.T) {
	c := newCloud(t, 0)
	dir := t.TempDir()
	code, log := run(t, `{"foo": "bar"}`, cacheVar(dir), writeDeployment(t, c.heatInputs("")))
	if code != 0 {
		t.Fatalf("status %d, log:\n%s", code, log)
	}
	c.ks.SetPassword("n3wword")
	rotated := writeDeployment(t, strings.Replace(c.heatInputs(""), "pa55word", "n3wword", 1))
	code, log = run(t, `{"foo": "bar"}`, cacheVar(dir), rotated)
	if code != 0 || c.ks.Authentications() != 2 {
		t.Fatalf("status %d, %d authentications (want 2), log:\n%s", code, c.ks.Authentications(), log)
	}
	if files, _ := filepath.Glob(dir + "/token-*.json"); len(files) != 2 {
		t.Errorf("cache entries %v, want one per password", files)
	}
}

// A token that expires within the margin (2 minutes) is not taken from
// the cache, though Keystone would still accept it.
func TestNearlyExpiredTokenNotUsed(t *testing.T) {
	c := newCloud(t, 0)
	c.ks.SetExpiresIn(90 * time.Second)
	notifyTwice(t, writeDeployment(t, c.heatInputs("")), t.TempDir(), nil)
	if n := c.ks.Authentications(); n != 2 {
		t.Errorf("%d authentications, want 2", n)
	}
}

// A cached token Heat refuses (revoked, or Keystone's clock ahead) is
// replaced at once, and the signal goes.
func TestRefusedCachedTokenReplaced(t *testing.T) {
	c := newCloud(t, 0)
	dir := t.TempDir()
	notifyTwice(t, writeDeployment(t, c.heatInputs("")), dir, c.ks.RevokeAll)
	if n := c.ks.Authentications(); n != 2 {
		t.Errorf("%d authentications, want 2", n)
	}
	if got := c.requests(); len(got) != 3 || got[2] != signalled {
		t.Errorf("requests %q: want the signal, then refused and sent again", got)
	}
	c.mu.Lock()
	c.got = nil
	c.mu.Unlock()
	if code, log := run(t, `{"foo": "bar"}`, cacheVar(dir), writeDeployment(t, c.heatInputs(""))); code != 0 || c.ks.Authentications() != 2 {
		t.Errorf("the replacement was not kept: status %d, %d authentications, log:\n%s", code, c.ks.Authentications(), log)
	}
}

// An entry that cannot be used (garbled, readable by others, a link,
// not a file) is one warning and a new authentication, never a failure;
// the new token replaces it.
func TestBadCacheEntryIgnored(t *testing.T) {
	for _, tc := range []struct {
		name, warning string
		spoil         func(path string) error
	}{
		{"garbled", "not a token entry", func(p string) error { return os.WriteFile(p, []byte(`{"token": `), 0o600) }},
		{"empty", "not a token entry", func(p string) error { return os.Truncate(p, 0) }},
		{"readable by others", "mode 0644, not private", func(p string) error { return os.Chmod(p, 0o644) }},
		{"a link", "a symbolic link", func(p string) error {
			os.Rename(p, p+".real")
			return os.Symlink(p+".real", p)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t, 0)
			dir := t.TempDir()
			path := writeDeployment(t, c.heatInputs(""))
			log := notifyTwice(t, path, dir, func() {
				if err := tc.spoil(cacheFile(t, dir)); err != nil {
					t.Fatal(err)
				}
			})
			if n := strings.Count(log, "[WARNING] Ignoring the cached Keystone token"); n != 1 || !strings.Contains(log, tc.warning) {
				t.Errorf("%d warnings, want 1 saying %q; log:\n%s", n, tc.warning, log)
			}
			if n := c.ks.Authentications(); n != 2 {
				t.Errorf("%d authentications, want 2", n)
			}
			if tc.name != "a link" {
				if fi, err := os.Lstat(cacheFile(t, dir)); err != nil || fi.Mode() != 0o600 {
					t.Errorf("the entry was not replaced: %v %v", fi.Mode(), err)
				}
			}
		})
	}
}

// A cache directory others may write to is not used, with one warning.
func TestInsecureCacheDirNotUsed(t *testing.T) {
	c := newCloud(t, 0)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	log := notifyTwice(t, writeDeployment(t, c.heatInputs("")), dir, nil)
	if n := strings.Count(log, "others may write to it"); n != 2 || c.ks.Authentications() != 2 {
		t.Errorf("%d warnings (one a run), %d authentications; log:\n%s", n, c.ks.Authentications(), log)
	}
	if files, _ := filepath.Glob(dir + "/token-*"); len(files) != 0 {
		t.Errorf("entries written: %v", files)
	}
}

// The variable names the cache; "" and "off" keep none; unset, the
// program's default (ProcessEnv's DefaultTokenCache) is used.
func TestTokenCacheVariable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ func(dir string) []string
		auths   int
	}{
		{"default", func(string) []string { return nil }, 1},
		{"named", cacheVar, 1},
		{"empty", func(string) []string { return cacheVar("") }, 2},
		{"off", func(string) []string { return cacheVar("off") }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t, 0)
			dir := filepath.Join(t.TempDir(), "tokens")
			path := writeDeployment(t, c.heatInputs(""))
			for range 2 {
				var stderr bytes.Buffer
				env := notify.Env{Stdin: strings.NewReader(`{}`), Stderr: &stderr, TokenCache: dir,
					Environ: append(tc.environ(dir), deadline.NotifyRetryVar+"=1")}
				if err := notify.Run(context.Background(), []string{path}, env); err != nil {
					t.Fatalf("%v, log:\n%s", err, stderr.String())
				}
			}
			if n := c.ks.Authentications(); n != tc.auths {
				t.Errorf("%d authentications, want %d", n, tc.auths)
			}
		})
	}
}
