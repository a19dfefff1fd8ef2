package e2e

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// readAgentLog reads a node's agent.log as the tests wrote it ("15:04:05.000
// <line>", the time it arrived), on the day of its first Python stamp.
func readAgentLog(t *testing.T, path string) []Line {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := pyStamp.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s: no Python time stamp to take the day from", path)
	}
	day := m[1][:len("2006-01-02")]
	var lines []Line
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		at, text, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("%s: %q has no arrival time", path, sc.Text())
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05.000", day+" "+at, time.Local)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, Line{At: ts, Text: text})
	}
	return lines
}

// realHooks is where the run that captured testdata/agentlog/{heat,zaqar}.log
// installed the hooks.
const realHooks = "/tmp/e2e-bin-3364266763/destdir/usr/libexec/heat-config/hooks/"

// The shares and the split of each deployment, read from agent logs,
// without the lab: synthetic.log is one first pass of two signalled
// deployments (script by HEAT_SIGNAL, then a puppet one that fails, by
// ZAQAR_SIGNAL), a pass whose deployment sends no signal, and a pass of
// one TEMP_URL_SIGNAL deployment; heat.log and zaqar.log are real.
func TestDeploymentShares(t *testing.T) {
	type split struct {
		group                                            string
		signalled                                        bool
		hook, request, own                               string
		collectToHook, hookEndToSignal, rest, fromChange string
		hookEndToNotify, notifyToSignal                  string
	}
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	for _, c := range []struct {
		file, hooks string
		from        string // 15:04:05 of the log's day; "" for all
		want        []split
	}{
		{"synthetic.log", "/tmp/e2e-bin-1/destdir/usr/libexec/heat-config/hooks/", "", []split{
			{"script", true, "300ms", "100ms", "110ms", "200ms", "40ms", "70ms", "310ms", "20ms", "20ms"},
			// the second deployment of a pass: its collect_to_hook starts at the first's end
			{"puppet", true, "2s", "100ms", "140ms", "0s", "20ms", "120ms", "140ms", "10ms", "10ms"},
			{"script", false, "100ms", "0s", "0s", "150ms", "0s", "0s", "150ms", "0s", "0s"},
			{"script", true, "60ms", "60ms", "100ms", "100ms", "30ms", "70ms", "200ms", "10ms", "20ms"},
		}},
		{"synthetic.log", "/tmp/e2e-bin-1/destdir/usr/libexec/heat-config/hooks/", "10:00:05", []split{
			{"script", false, "100ms", "0s", "0s", "150ms", "0s", "0s", "150ms", "0s", "0s"},
			{"script", true, "60ms", "60ms", "100ms", "100ms", "30ms", "70ms", "200ms", "10ms", "20ms"},
		}},
		// Captured by TestDeploy (the agent's log on the node, 2026-11-29):
		// the zaqar pair's create pass (script, then puppet) and update
		// pass, and the heat pair's update pass; the figures are the ones
		// that run logged, within a millisecond (agent.log keeps the
		// arrival times to the millisecond, the run had them to the
		// nanosecond).
		{"zaqar.log", realHooks, "", []split{
			{"script", true, "373ms", "302ms", "256ms", "904ms", "179ms", "77ms", "1.16s", "10ms", "169ms"},
			{"puppet", true, "28.864s", "541ms", "299ms", "0s", "263ms", "36ms", "299ms", "147ms", "116ms"},
			{"script", true, "53ms", "123ms", "57ms", "172ms", "42ms", "15ms", "229ms", "4ms", "38ms"},
		}},
		{"heat.log", realHooks, "14:47:10", []split{
			{"script", true, "138ms", "58ms", "152ms", "551ms", "126ms", "26ms", "703ms", "7ms", "119ms"},
		}},
	} {
		t.Run(c.file+"@"+c.from, func(t *testing.T) {
			lines := readAgentLog(t, "testdata/agentlog/"+c.file)
			var from time.Time
			if c.from != "" {
				d := lines[0].At
				f, err := time.ParseInLocation("2006-01-02 15:04:05", d.Format("2006-01-02 ")+c.from, time.Local)
				if err != nil {
					t.Fatal(err)
				}
				from = f
			}
			got := deploymentShares(lines, c.hooks, from)
			if len(got) != len(c.want) {
				t.Fatalf("%d deployments, want %d: %+v", len(got), len(c.want), got)
			}
			for i, s := range got {
				g := split{s.group, s.signalled, ms(s.hook()), ms(s.request()), ms(s.own()),
					ms(s.collectToHook()), ms(s.hookEndToSignal()), ms(s.rest()), ms(s.fromChange()),
					ms(s.hookEndToNotify()), ms(s.notifyToSignal())}
				if g != c.want[i] {
					t.Errorf("deployment %d:\n got %+v\nwant %+v", i, g, c.want[i])
				}
				if s.signalled && s.own() != s.hookEndToSignal()+s.rest() {
					t.Errorf("deployment %d: own %s is not hook_end_to_signal + rest (%s + %s)", i, s.own(), s.hookEndToSignal(), s.rest())
				}
			}
		})
	}
}

// The lines logged for a deployment: the TARGET only for the update step
// of a transport that authenticates.
func TestShareLines(t *testing.T) {
	lines := readAgentLog(t, "testdata/agentlog/synthetic.log")
	s := deploymentShares(lines, "/tmp/e2e-bin-1/destdir/usr/libexec/heat-config/hooks/", time.Time{})
	for _, c := range []struct {
		pair, signal, step string
		s                  deploymentShare
		want               []string
	}{
		{"heat", HeatSignal, "update", s[0], []string{
			"DEPLOYMENT_SHARE pair=heat step=update group=script own=0.110s hook=0.300s signal_request=0.100s",
			"OWN_SPLIT pair=heat step=update group=script collect_to_hook=0.200s hook_end_to_signal=0.040s rest=0.070s own=0.110s from_change=0.310s hook_end_to_notify=0.020s notify_to_signal=0.020s",
			"TARGET heat-config/own-share-heat measured=110ms goal=<=50ms MISS",
		}},
		{"zaqar", ZaqarSignal, "create", s[1], []string{
			"DEPLOYMENT_SHARE pair=zaqar step=create group=puppet own=0.140s hook=2.000s signal_request=0.100s",
			"OWN_SPLIT pair=zaqar step=create group=puppet collect_to_hook=0.000s hook_end_to_signal=0.020s rest=0.120s own=0.140s from_change=0.140s hook_end_to_notify=0.010s notify_to_signal=0.010s",
		}},
		{"temp-url", TempURLSignal, "update", s[3], []string{
			"DEPLOYMENT_SHARE pair=temp-url step=update group=script own=0.100s hook=0.060s signal_request=0.060s",
			"OWN_SPLIT pair=temp-url step=update group=script collect_to_hook=0.100s hook_end_to_signal=0.030s rest=0.070s own=0.100s from_change=0.200s hook_end_to_notify=0.010s notify_to_signal=0.020s",
		}},
	} {
		got := shareLines(c.pair, c.signal, c.step, c.s)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s %s:\n got %s\nwant %s", c.pair, c.step, strings.Join(got, "\n     "), strings.Join(c.want, "\n     "))
		}
	}
}

// Only our agents' authentications count: not Heat's (python-keystoneclient),
// nor a service checking a token (GET).
func TestAgentTokenPosts(t *testing.T) {
	lines := []string{
		`REQ POST /v3/auth/tokens 201 ua="gophercloud/v2.15.0"`,
		`REQ POST /v3/auth/tokens 201 ua="python-keystoneclient"`,
		`REQ GET /v3/auth/tokens 200 ua="gophercloud/v2.15.0"`,
		`REQ POST /v3/users 201 ua="python-keystoneclient"`,
		`REQ POST /v3/auth/tokens 401 ua="gophercloud/v2.15.0"`,
		`worker 1 buried after 1 seconds`,
	}
	if n := agentTokenPosts(lines); n != 2 {
		t.Errorf("%d agent token posts, want 2", n)
	}
}
