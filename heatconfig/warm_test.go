package heatconfig

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/keystonetest"
	"github.com/tripleo-go/agent/signal"
)

// slowHook sleeps, then writes how many token cache entries it sees and
// when it ended, and succeeds.
const slowHook = `sleep 0.8
ls "$TOKENS" 2>/dev/null | grep -c '^token-' > "$NODE/cache-in-hook"
date +%s%N > "$NODE/hook-end"
printf '{"deploy_status_code": 0}'
`

// runAt runs n with a fixed clock, so that two runs' logs compare.
func (n *node) runAt() error {
	n.t.Helper()
	n.stderr.Reset()
	env := n.env()
	env.Now = func() time.Time { return time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC) }
	return Run(context.Background(), nil, env)
}

// visible is the log's lines at INFO and above.
func visible(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "(heat-config) [") && !strings.Contains(l, "[DEBUG]") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A HEAT_SIGNAL deployment's token is fetched while its hook runs, into
// heat-config-notify's cache: the entry is there before the hook ends,
// heat-config-notify takes it and does not authenticate (one
// authentication in all). Nothing else shows: the log at INFO and above,
// the state files and the signal are those of a run without a warm-up.
func TestWarmupFetchesTheTokenDuringTheHook(t *testing.T) {
	c := newCloud(t)
	c.authDelay = 150 * time.Millisecond // the lab's, idle
	var afterHook, toNotify [2]time.Duration
	var logs, states [2]string
	for i, cache := range []string{"tokens", "off"} {
		n := newNode(t)
		dir := filepath.Join(n.dir, cache)
		if cache == "off" {
			dir = "off"
		}
		n.realNotify(t, dir)
		n.extraEnv = append(n.extraEnv, "TOKENS="+dir)
		n.hook("slow", slowHook)
		n.deployments(c.heatDep("x", "slow", "pa55word"))
		before := c.ks.Authentications()
		if err := n.runAt(); err != nil {
			t.Fatal(err)
		}
		in, _ := os.ReadFile(filepath.Join(n.dir, "cache-in-hook"))
		at, _ := os.ReadFile(filepath.Join(n.calls, "cache-at-notify"))
		auths := c.ks.Authentications() - before
		end := stamped(t, filepath.Join(n.dir, "hook-end"))
		afterHook[i] = stamped(t, filepath.Join(n.calls, "notify-end")).Sub(end)
		toNotify[i] = stamped(t, filepath.Join(n.calls, "notify-start")).Sub(end)
		if want := map[string]string{"tokens": "1", "off": "0"}[cache]; strings.TrimSpace(string(in)) != want || string(at) != want || auths != 1 {
			t.Errorf("cache %s: entries %q in the hook, %q when notify started, %d authentications; want %s, %s, 1; log:\n%s",
				cache, in, at, auths, want, want, n.stderr.String())
		}
		if strings.Contains(n.stderr.String(), "Keystone token for the signal") || strings.Contains(n.stderr.String(), "pa55word") {
			t.Errorf("cache %s: log:\n%s", cache, n.stderr.String())
		}
		logs[i] = strings.ReplaceAll(visible(n.stderr.String()), n.dir, "NODE")
		for _, f := range []string{"x.json", "x.notify.json"} {
			s, _ := n.state(f)
			states[i] += s
		}
	}
	if c.signalled() != 2 {
		t.Errorf("%d signals, want 2", c.signalled())
	}
	if logs[0] != logs[1] || states[0] != states[1] {
		t.Errorf("the warm-up shows:\nlog %q\nwithout %q\nstate %q\nwithout %q", logs[0], logs[1], states[0], states[1])
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("heat-config-notify ran %v with the warm-up, %v without; from the hook's end to its start %v, %v (Keystone answers in %v)",
		ms(afterHook[0]-toNotify[0]), ms(afterHook[1]-toNotify[1]), ms(toNotify[0]), ms(toNotify[1]), c.authDelay)
}

// A Keystone that never answers delays the signal by warmGrace at most:
// the warm-up is cancelled, heat-config-notify runs, and the log says so
// in one debug line.
func TestWarmupBoundedWhenKeystoneHangs(t *testing.T) {
	c := newCloud(t)
	c.hang = true
	n := newNode(t)
	n.extraEnv = []string{signal.TokenCacheVar + "=" + filepath.Join(n.dir, "tokens")}
	n.hook("quick", `printf '{}'`)
	n.deployments(c.heatDep("x", "quick", "pa55word"))
	start := time.Now()
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < warmGrace || took > warmGrace+2500*time.Millisecond {
		t.Errorf("the run took %v; want the warm-up's grace, %v, and little more", took, warmGrace)
	}
	if _, ok := n.notified()["x"]; !ok {
		t.Errorf("not signalled; log:\n%s", n.stderr.String())
	}
	debug := regexp.MustCompile(`\[DEBUG\] Keystone token for the signal of x not ready 2s after the hook: left to heat-config-notify\n`)
	if got := debug.FindAllString(n.stderr.String(), -1); len(got) != 1 {
		t.Errorf("want one debug line about the warm-up; log:\n%s", n.stderr.String())
	}
}

// A warm-up that fails (a refused password) is one debug line without
// the password; the deployment is signalled as without it.
func TestWarmupFailureIsOneDebugLine(t *testing.T) {
	c := newCloud(t)
	n := newNode(t)
	n.extraEnv = []string{signal.TokenCacheVar + "=" + filepath.Join(n.dir, "tokens")}
	n.hook("quick", `printf '{}'`)
	n.deployments(c.heatDep("x", "quick", "wr0ngpass"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	log := n.stderr.String()
	if _, ok := n.notified()["x"]; !ok || strings.Count(log, "Keystone token for the signal of x not fetched ahead: HEAT_SIGNAL: ") != 1 ||
		strings.Contains(log, "wr0ngpass") || strings.Contains(log, "[WARNING]") || strings.Contains(log, "[ERROR]") {
		t.Errorf("log:\n%s", log)
	}
	if c.ks.Authentications() != 1 {
		t.Errorf("%d authentications, want the warm-up's one", c.ks.Authentications())
	}
}

// The token cache turned off ("off", "") or absent (the environment
// names none, and neither does the program's default: tests) means no
// warm-up; unset, the program's default cache is warmed.
func TestWarmupFollowsTheTokenCache(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		set         bool
		def         string
		want        int
	}{
		{"off", "off", true, "default", 0},
		{"OFF, spaced", " OFF ", true, "default", 0},
		{"empty", "", true, "default", 0},
		{"unset, no default", "", false, "", 0},
		{"unset, the default", "", false, "default", 1},
		{"named", "named", true, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCloud(t)
			n := newNode(t)
			value := tc.value
			if value == "named" {
				value = filepath.Join(n.dir, "named")
			}
			if tc.set {
				n.extraEnv = []string{signal.TokenCacheVar + "=" + value}
			}
			n.hook("quick", `printf '{}'`)
			n.deployments(c.heatDep("x", "quick", "pa55word"))
			env := n.env()
			if tc.def != "" {
				env.TokenCache = filepath.Join(n.dir, tc.def)
			}
			if err := Run(context.Background(), nil, env); err != nil {
				t.Fatal(err)
			}
			entries, _ := filepath.Glob(filepath.Join(n.dir, "*", "token-*.json"))
			if c.ks.Authentications() != tc.want || len(entries) != tc.want {
				t.Errorf("%d authentications, cache entries %v; want %d", c.ks.Authentications(), entries, tc.want)
			}
		})
	}
}

// Signals that do not authenticate (CFN_SIGNAL, TEMP_URL_SIGNAL, none)
// never reach Keystone, and leave the token cache alone.
func TestWarmupNeverForSignalsWithoutKeystone(t *testing.T) {
	c := newCloud(t)
	n := newNode(t)
	cache := filepath.Join(n.dir, "tokens")
	n.extraEnv = []string{signal.TokenCacheVar + "=" + cache}
	n.hook("quick", `printf '{}'`)
	n.deployments(
		signalDep("cfn", "quick", "deploy_signal_transport", "CFN_SIGNAL", "deploy_signal_id", c.srv.URL+"/cfn"),
		signalDep("temp", "quick", "deploy_signal_transport", "TEMP_URL_SIGNAL", "deploy_signal_id", c.srv.URL+"/swift",
			"deploy_signal_verb", "PUT"),
		signalDep("none", "quick", "deploy_signal_transport", "NO_SIGNAL"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	if got := n.notified(); len(got) != 3 {
		t.Errorf("signalled %v", got)
	}
	if _, err := os.Stat(cache); c.ks.Requests() != 0 || err == nil {
		t.Errorf("%d Keystone requests, token cache %v; want none", c.ks.Requests(), err)
	}
	if strings.Contains(n.stderr.String(), "Keystone token") {
		t.Errorf("log:\n%s", n.stderr.String())
	}
}

// A token kept before the cloud gained a region is not what the
// warm-up leaves for a signal to that region: the warm-up passes over
// the entry, authenticates, and keeps a token whose catalog has the
// region, which heat-config-notify then takes without a word. Two runs,
// as two os-refresh-config passes: one authentication each.
func TestWarmupReplacesAnEntryWithoutTheRegion(t *testing.T) {
	c := newCloud(t)
	n := newNode(t)
	n.realNotify(t, filepath.Join(n.dir, "tokens"))
	n.hook("quick", `printf '{}'`)
	dep := func(id, region string) string {
		return signalDep(id, "quick", "deploy_signal_transport", "HEAT_SIGNAL", "deploy_auth_url", c.srv.URL+"/identity/v3",
			"deploy_user_id", "uid", "deploy_password", "pa55word", "deploy_project_id", "pid",
			"deploy_stack_id", "stk/cccc", "deploy_resource_name", "the_resource", "deploy_region_name", region)
	}
	n.deployments(dep("a", "RegionOne"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	c.ks.AddEndpoint(keystonetest.Endpoint{Type: "orchestration", Interface: "public", Region: "RegionTwo", URL: c.srv.URL + "/heat/v1/pid"})
	n.deployments(dep("a", "RegionOne"), dep("b", "RegionTwo"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	log := n.stderr.String()
	if c.signalled() != 2 || c.ks.Authentications() != 2 || strings.Contains(log, "authenticating again") || strings.Contains(log, "pa55word") {
		t.Errorf("%d signals, %d authentications; want 2, 2 (the warm-ups'); log:\n%s", c.signalled(), c.ks.Authentications(), log)
	}
}

// The real heat-config-notify of these tests keeps its default token
// cache in the test's directory, never in signal.DefaultTokenCache on
// the host.
func TestRealNotifyDefaultCacheIsTheTests(t *testing.T) {
	c := newCloud(t)
	n := newNode(t)
	n.realNotify(t, "")
	n.hook("quick", `printf '{}'`)
	n.deployments(c.heatDep("x", "quick", "pa55word"))
	if err := n.run(); err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(n.calls, "default-tokens", "token-*.json"))
	if c.signalled() != 1 || len(entries) != 1 {
		t.Errorf("%d signals, entries %v; want 1 and one entry in the test's directory; log:\n%s", c.signalled(), entries, n.stderr.String())
	}
}
