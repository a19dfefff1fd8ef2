package occ

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// unknownConf is a configuration with a key no option reads in each
// kind of place, and the reference's own options that we do not use.
const unknownConf = `[DEFAULT]
command = true
polling-interval = abc
collectors = local
cachedir = D/cache
backup_cachedir = D/backup
use_stderr = false
log_dir = /var/log/x
[local]
path = D/local
pth = D/other
[heat]
passwrd = hunter2
[heatt]
auth_url = http://192.0.2.1:5000/v3
[request]
metadata-url = http://192.0.2.1/o?temp_url_sig=S3CRET
xyzzy = 1
`

// The warnings of unknownConf, in the file's order (F: its path).
var unknownWarnings = []string{
	"Unknown option polling-interval in [DEFAULT] of F: ignored (the nearest known option is polling_interval).",
	"Unknown option pth in [local] of F: ignored (the nearest known option is path).",
	"Unknown option passwrd in [heat] of F: ignored (the nearest known option is password).",
	"Unknown option auth_url in [heatt] of F: ignored (the nearest known option is [heat] auth_url).",
	"Unknown option metadata-url in [request] of F: ignored (the nearest known option is metadata_url).",
	"Unknown option xyzzy in [request] of F: ignored.",
}

// Every key of a file that os-collect-config does not read is named at
// start-up, once, in every mode, with the nearest known option; the
// reference (oslo.config) ignores them without a word. The value is
// never shown. The daemon's checks for a changed configuration, every
// pass, do not name them again.
func TestUnknownOptionsWarned(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"daemon", nil},
		{"--one-time", []string{"--one-time"}},
		{"--force", []string{"--force"}},
		{"--print", []string{"--print"}},
		{"--print-cachedir", []string{"--print-cachedir"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.MkdirAll(dir+"/local", 0o755)
			conf := filepath.Join(dir, "occ.conf")
			os.WriteFile(conf, []byte(strings.ReplaceAll(unknownConf, "D/", dir+"/")), 0o644)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sleeps := 0
			var stderr strings.Builder
			env := Env{Stdout: io.Discard, Stderr: &stderr, After: func(time.Duration) <-chan time.Time {
				if sleeps++; sleeps == 3 {
					cancel()
				}
				return elapsed()
			}}
			Run(ctx, append([]string{"--config-file", conf}, tc.args...), env)
			var got []string
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.HasPrefix(l, "Unknown option") {
					got = append(got, strings.ReplaceAll(l, conf, "F"))
				}
			}
			if strings.Join(got, "\n") != strings.Join(unknownWarnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(got, "\n"), strings.Join(unknownWarnings, "\n"), stderr.String())
			}
			if strings.Contains(stderr.String(), "hunter2") || strings.Contains(stderr.String(), "S3CRET") {
				t.Errorf("a value in the log:\n%s", stderr.String())
			}
			if tc.name == "daemon" && sleeps != 3 {
				t.Errorf("the daemon slept %d times, want 3", sleeps)
			}
		})
	}
}

// A bad value of a known option is still refused, its unknown neighbours
// named before the error.
func TestUnknownOptionsBeforeARefusal(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "occ.conf")
	os.WriteFile(conf, []byte("[DEFAULT]\ncommand = true\npolling_interval = abc\npolling-interval = 5\n"), 0o644)
	var stderr strings.Builder
	err := Run(context.Background(), []string{"--config-file", conf, "--one-time"}, Env{Stdout: io.Discard, Stderr: &stderr})
	want := "Unknown option polling-interval in [DEFAULT] of " + conf + ": ignored (the nearest known option is polling_interval).\n" +
		`invalid value "abc" for option polling-interval (from ` + conf + "): not a number\n"
	if err == nil || stderr.String() != want {
		t.Fatalf("err %v, stderr:\n%s\nwant:\n%s", err, stderr.String(), want)
	}
}

// Every option the reference registers, oslo.log's, oslo.config's and
// (where the lab's packages brought it) oslo.concurrency's
// included, is known: a file written for the Python agent gets no
// warning for any of them.
func TestReferenceOptionsAreKnown(t *testing.T) {
	difftest.Oracle(t)
	out, err := exec.Command("/usr/bin/python3", "-c", `
from oslo_config import cfg
from os_collect_config import collect
collect.setup_conf()
C = cfg.CONF
C(args=[], prog='os-collect-config')
for g, opts in [('DEFAULT', C._opts)] + [(g, grp._opts) for g, grp in C._groups.items()]:
    for info in opts.values():
        o = info['opt']
        print(g, o.dest)
        for d in o.deprecated_opts:
            print(d.group or g, d.name or o.dest)
`).Output()
	if err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("reference os_collect_config: %v", err)
		}
		t.Skip("reference os_collect_config not installed")
	}
	sections := map[string][]string{}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		g, k, _ := strings.Cut(l, " ")
		if sections[g] == nil {
			order = append(order, g)
		}
		sections[g] = append(sections[g], k)
	}
	if len(sections["DEFAULT"]) < 30 || len(sections["zaqar"]) < 5 {
		t.Fatalf("the reference's options: %q", out)
	}
	var file strings.Builder
	for _, g := range order {
		file.WriteString("[" + g + "]\n")
		for _, k := range sections[g] {
			file.WriteString(k + " = 1\n")
		}
	}
	conf := filepath.Join(t.TempDir(), "all.conf")
	os.WriteFile(conf, []byte(file.String()), 0o644)
	var unknown []string
	// Values are not the point: a refused one still comes after every
	// key was read.
	Parse([]string{"--config-file", conf}, config.Env{Unknown: func(u config.Unknown) { unknown = append(unknown, u.String()) }})
	if len(unknown) > 0 {
		t.Errorf("the reference's options named unknown:\n%s", strings.Join(unknown, "\n"))
	}
}

// The daemon's checks for a changed configuration (every pass) and for a
// valid one (SIGHUP) parse the files again without a word; the
// re-executed daemon, a new start-up, names the unknown keys of the
// files it starts with.
func TestUnknownOptionsNamedAtEachStartOnly(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/local", 0o755)
	conf := filepath.Join(dir, "occ.conf")
	os.WriteFile(conf, []byte(strings.ReplaceAll(unknownConf, "D/", dir+"/")), 0o644)
	var stderr strings.Builder
	hup := make(chan os.Signal, 1)
	restarts, sleeps := 0, 0
	env := Env{Stdout: io.Discard, Stderr: &stderr, Hangup: hup,
		After: func(time.Duration) <-chan time.Time {
			switch sleeps++; sleeps {
			case 2: // an invalid file: checked, refused, not re-executed into
				f, _ := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("[DEFAULT]\nsplay = never\n")
				f.Close()
			case 4:
				os.WriteFile(conf, []byte(strings.ReplaceAll(unknownConf, "D/", dir+"/")+"[DEFAULT]\ncolectors = heat\n"), 0o644)
			}
			return elapsed()
		},
		Reexec: func() error { restarts++; return nil },
	}
	if err := Run(context.Background(), []string{"--config-file", conf}, env); err != nil || restarts != 1 {
		t.Fatalf("err %v, %d restarts\n%s", err, restarts, stderr.String())
	}
	if n := strings.Count(stderr.String(), "Unknown option "); n != len(unknownWarnings) || strings.Contains(stderr.String(), "colectors") {
		t.Fatalf("%d warnings before the restart, want the %d of the start:\n%s", n, len(unknownWarnings), stderr.String())
	}
	// The re-executed process.
	stderr.Reset()
	sleeps = 10
	hup <- os.Interrupt
	env.Reexec = func() error { restarts++; return nil }
	if err := Run(context.Background(), []string{"--config-file", conf}, env); err != nil || restarts != 2 {
		t.Fatalf("err %v, %d restarts\n%s", err, restarts, stderr.String())
	}
	if n := strings.Count(stderr.String(), "Unknown option "); n != len(unknownWarnings)+1 ||
		!strings.Contains(stderr.String(), "Unknown option colectors in [DEFAULT] of "+conf+": ignored (the nearest known option is collectors).") {
		t.Fatalf("after the restart:\n%s", stderr.String())
	}
}
