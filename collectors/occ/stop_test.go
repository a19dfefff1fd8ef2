package occ

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/systemd"
)

// record is the status record as JSON, nil when there is none.
func record(t *testing.T, statusDir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(statusDir, agentstate.PassFile))
	if os.IsNotExist(err) {
		return nil
	}
	var rec map[string]any
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("record %s: %v", data, err)
	}
	return rec
}

// stopOf is the record's stop: its error and exit, ok false when none.
func stopOf(rec map[string]any) (msg string, exit float64, ok bool) {
	s, ok := rec["stopped"].(map[string]any)
	if !ok {
		return "", 0, false
	}
	msg, _ = s["error"].(string)
	exit, _ = s["exit"].(float64)
	return msg, exit, s["cause"] == "configuration"
}

// A configuration os-collect-config refuses stops it before any pass, in
// every mode that runs passes; it leaves the stop in the status record
// for tripleo-agent-status, with the refused value in the error. A run
// that only prints, or a command line it could not parse, leaves none.
func TestConfigErrorLeavesAStopRecord(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		args       []string
		exit       int
		want       []string // in the record's error; nil: no record
	}{
		{"collectors on one line, daemon", "[DEFAULT]\ncollectors = local,heat\n", nil, exitcode.Failure,
			[]string{"Unknown collectors ['local,heat']", "takes one name per line", `"collectors = local" and "collectors = heat"`}},
		{"collectors on one line, --one-time", "[DEFAULT]\ncollectors = local,heat\n", []string{"--one-time"}, exitcode.Failure,
			[]string{"Unknown collectors ['local,heat']", "takes one name per line"}},
		{"a bad value, daemon", "[DEFAULT]\npolling_interval = abc\n", nil, exitcode.Failure,
			[]string{`invalid value "abc" for option polling-interval (from `, "not a number"}},
		{"a bad value, --one-time", "[DEFAULT]\npolling_interval = abc\n", []string{"--one-time"}, exitcode.Failure,
			[]string{`invalid value "abc" for option polling-interval`}},
		{"a bad value on the command line", "", []string{"--one-time", "--polling-interval", "soon"}, exitcode.Failure,
			[]string{`invalid value "soon" for option polling-interval (from command line)`}},
		{"a file that is no INI", "[DEFAULT]\nthis is no assignment\n", nil, exitcode.Usage,
			[]string{`expected "key = value", got "this is no assignment"`}},
		{"a secret is not recorded", "[heat]\npassword = hunter2$nosuch\n", []string{"--one-time"}, exitcode.Failure,
			[]string{`invalid value "***" for option heat.password`}},
		{"a signed URL's signature is not recorded", "[request]\nmetadata_url = http://192.0.2.1/o?temp_url_sig=S3CRET&x=$nosuch\n", []string{"--one-time"}, exitcode.Failure,
			[]string{`invalid value "http://192.0.2.1/o?***" for option request.metadata-url`}},
		{"--print leaves no record", "[DEFAULT]\ncollectors = local,heat\n", []string{"--print"}, exitcode.Failure, nil},
		{"--print-cachedir leaves no record", "[DEFAULT]\npolling_interval = abc\n", []string{"--print-cachedir"}, exitcode.Failure, nil},
		{"a usage error leaves no record", "", []string{"--no-such-option"}, exitcode.Usage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "occ.conf")
			os.MkdirAll(dir+"/local", 0o755)
			os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\ncachedir = "+dir+"/cache\nbackup_cachedir = "+dir+"/backup\n[local]\npath = "+dir+"/local\n"+tc.conf), 0o644)
			var stderr strings.Builder
			env := Env{Stdout: io.Discard, Stderr: &stderr, StatusDir: dir + "/run",
				After: func(time.Duration) <-chan time.Time { t.Fatal("the daemon ran"); return nil }}
			got := exitcode.Of(Run(context.Background(), append([]string{"--config-file", conf}, tc.args...), env))
			if got != tc.exit {
				t.Errorf("exit %d, want %d\n%s", got, tc.exit, stderr.String())
			}
			rec := record(t, dir+"/run")
			if tc.want == nil {
				if rec != nil {
					t.Fatalf("a record: %v", rec)
				}
				return
			}
			msg, exit, ok := stopOf(rec)
			if !ok || int(exit) != tc.exit {
				t.Fatalf("record %v, want a stop on the configuration with exit %d", rec, tc.exit)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if all := msg + stderr.String(); strings.Contains(all, "hunter2") || strings.Contains(all, "S3CRET") {
				t.Errorf("a secret in %q or stderr:\n%s", msg, stderr.String())
			}
			if rec["ended"] != "0001-01-01T00:00:00Z" || rec["version"] != 1.0 {
				t.Errorf("a stop before any pass has no pass: %v", rec)
			}
		})
	}
}

// The stop stays in the record until a pass ends, even after a healthy
// pass, whose fields it keeps; the next pass's record has none.
func TestStopRecordUntilAPass(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	os.WriteFile(dir+"/local/a.json", []byte(`{"a": 1}`), 0o644)
	good := "[DEFAULT]\ncommand = true\ncachedir = " + dir + "/cache\nbackup_cachedir = " + dir + "/backup\ncollectors = local\n[local]\npath = " + dir + "/local\n"
	run := func(conf string, args ...string) int {
		t.Helper()
		os.WriteFile(filepath.Join(dir, "occ.conf"), []byte(conf), 0o644)
		return exitcode.Of(Run(context.Background(), append([]string{"--config-file", filepath.Join(dir, "occ.conf")}, args...),
			Env{Stdout: io.Discard, Stderr: io.Discard, StatusDir: dir + "/run"}))
	}
	if got := run(good, "--one-time"); got != 0 {
		t.Fatalf("good pass: exit %d", got)
	}
	healthy := record(t, dir+"/run")
	if _, _, stopped := stopOf(healthy); stopped || healthy["converged"] != true {
		t.Fatalf("after a good pass: %v", healthy)
	}
	if got := run(strings.Replace(good, "collectors = local", "collectors = local,heat", 1)); got != exitcode.Failure {
		t.Fatalf("a bad configuration: exit %d", got)
	}
	rec := record(t, dir+"/run")
	if msg, _, stopped := stopOf(rec); !stopped || !strings.Contains(msg, "local,heat") {
		t.Fatalf("after the stop: %v", rec)
	}
	for _, k := range []string{"started", "ended", "converged", "command"} {
		if g, w := jsonText(rec[k]), jsonText(healthy[k]); g != w {
			t.Errorf("%s: %s, want the last pass's %s", k, g, w)
		}
	}
	if got := run(good, "--one-time"); got != 0 {
		t.Fatalf("good pass again: exit %d", got)
	}
	if rec := record(t, dir+"/run"); rec["stopped"] != nil || rec["converged"] != true {
		t.Fatalf("a pass after the stop: %v", rec)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Under systemd the stop is the unit's status line, which systemctl
// status shows while the unit waits to restart.
func TestStopTellsSystemd(t *testing.T) {
	conn := listenNotify(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "occ.conf")
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\ncollectors = local,heat\n"), 0o644)
	Run(context.Background(), []string{"--config-file", conf}, Env{Stdout: io.Discard, Stderr: io.Discard, Notify: systemd.New()})
	buf := make([]byte, 4096)
	conn.SetReadDeadline(time.Now().Add(time.Second))
	n, err := conn.Read(buf)
	if got := string(buf[:n]); err != nil || !strings.HasPrefix(got, "STATUS=stopped: configuration refused: Unknown collectors ['local,heat']") ||
		strings.Contains(got, "\n") {
		t.Fatalf("notification %q (%v)", got, err)
	}
}
