package local

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

// oracle runs the reference collector name on paths and returns its
// result as JSON text ("unavailable" quoted when it says so).
func oracle(t *testing.T, script, name string, paths ...string) string {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", append([]string{script, name}, paths...)...).Output()
	if err != nil {
		if os.Getenv("REQUIRE_REFERENCE") == "1" {
			t.Fatalf("oracle: %v", err)
		}
		t.Skipf("reference collector not available: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// render prints our result as the oracle does.
func render(entries []collectors.Entry, err error) string {
	if errors.Is(err, collectors.ErrNotAvailable) {
		return `"unavailable"`
	}
	pairs := []jsondoc.Value{}
	for _, e := range entries {
		pairs = append(pairs, []jsondoc.Value{e.Name, e.Content})
	}
	return jsondoc.Dumps(pairs)
}

func write(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode)
}

func TestAgainstReference(t *testing.T) {
	difftest.Oracle(t)
	for _, tc := range []struct {
		name  string
		setup func(dir string) []string
	}{
		{"two dirs sorted bytewise, extensions kept", func(d string) []string {
			write(t, d+"/a/b.json", `{"b": 1}`, 0o644)
			write(t, d+"/a/Z", `{"z": [1, 2]}`, 0o644)
			write(t, d+"/b/a.json", `{"a": {"x": "é"}}`, 0o644)
			write(t, d+"/b/.hidden", `{"h": 1}`, 0o644)
			os.MkdirAll(d+"/b/subdir", 0o755)
			return []string{d + "/a", d + "/b"}
		}},
		{"missing dir skipped", func(d string) []string {
			write(t, d+"/a/x", `{"x": 1}`, 0o644)
			return []string{d + "/missing", d + "/a"}
		}},
		{"empty dir", func(d string) []string { os.MkdirAll(d+"/a", 0o755); return []string{d + "/a"} }},
		{"non-object JSON", func(d string) []string {
			write(t, d+"/a/list", `[1, "two"]`, 0o644)
			write(t, d+"/a/str", `"s"`, 0o644)
			return []string{d + "/a"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := tc.setup(t.TempDir())
			want := oracle(t, "../testdata/collector_oracle.py", Name, paths...)
			got := render((&Collector{Paths: paths, Log: logging.Discard}).Collect(context.Background()))
			if got != want {
				t.Fatalf("reference %s\nours      %s", want, got)
			}
		})
	}
}

// Deliberate fix: a bad file or an insecure directory is skipped with the
// reference's error line; the good files are still collected (the
// reference made the whole collector unavailable).
func TestBadFileDoesNotHideGoodOnes(t *testing.T) {
	d := t.TempDir()
	write(t, d+"/a/good", `{"good": true}`, 0o644)
	write(t, d+"/a/broken", `{"broken": `, 0o644)
	write(t, d+"/a/empty", ``, 0o644)
	write(t, d+"/a/open", `{"o": 1}`, 0o666)
	write(t, d+"/w/x", `{"x": 1}`, 0o644)
	os.Chmod(d+"/w", 0o777)
	var log bytes.Buffer
	c := &Collector{Paths: []string{d + "/a", d + "/w"}, Log: slog.New(slog.NewTextHandler(&log, nil))}
	got := render(c.Collect(context.Background()))
	if got != `[["good", {"good": true}]]` {
		t.Fatalf("got %s", got)
	}
	for _, want := range []string{d + "/a/broken is not valid JSON", d + "/a/empty is not valid JSON", d + "/a/open is world writable", d + "/w is world writable"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

// Deliberate fix: a FIFO, a socket or a link to a device among the files
// is skipped with one line naming it; the reference blocked on a FIFO
// forever (SIGTERM could not stop it) and read /dev/zero until memory ran
// out.
func TestNonRegularFilesAreSkipped(t *testing.T) {
	d := t.TempDir()
	write(t, d+"/a/good", `{"good": true}`, 0o644)
	if err := syscall.Mkfifo(d+"/a/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	// /dev/zero itself is world-writable, which is refused before reading.
	if err := syscall.Mknod(d+"/a/zero-dev", syscall.S_IFCHR|0o600, int(unix.Mkdev(1, 5))); err != nil {
		t.Skipf("mknod (needs root): %v", err)
	}
	if err := os.Symlink("zero-dev", d+"/a/zero"); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	c := &Collector{Paths: []string{d + "/a"}, Log: slog.New(slog.NewTextHandler(&log, nil))}
	done := make(chan string, 1)
	go func() { done <- render(c.Collect(context.Background())) }()
	select {
	case got := <-done:
		if got != `[["good", {"good": true}]]` {
			t.Fatalf("got %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Collect blocked on the FIFO")
	}
	for _, want := range []string{d + "/a/fifo is a FIFO, not a regular file; skipped", d + "/a/zero is a character device, not a regular file; skipped",
		d + "/a/zero-dev is a character device, not a regular file; skipped"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}

func TestNoPathsIsUnavailable(t *testing.T) {
	if _, err := (&Collector{Log: logging.Discard}).Collect(context.Background()); !errors.Is(err, collectors.ErrNotAvailable) {
		t.Fatalf("error %v", err)
	}
}

// Deliberate fix (issue 22): a file that cannot be used keeps the data
// its key was last committed with (KEY.json.last in the cache), with one
// WARNING naming the file, and the source is degraded naming it; a key
// never committed is left out, as before, and still degrades the source.
// The reference made the whole collector unavailable.
func TestBadFileKeepsLastCommittedData(t *testing.T) {
	const last = "{\n \"kept\": \"last good\"\n}"
	for _, tc := range []struct {
		name      string
		setup     func(t *testing.T, dir string) // dir holds the file "key"
		committed bool
		why       string // in the WARNING and the reason
		want      string // the entries, when not good's and key's
	}{
		{"truncated JSON", func(t *testing.T, d string) { write(t, d+"/key", `{"a": [1, `, 0o644) }, true, "not valid JSON", ""},
		{"empty file", func(t *testing.T, d string) { write(t, d+"/key", ``, 0o644) }, true, "not valid JSON", ""},
		{"world-writable file", func(t *testing.T, d string) { write(t, d+"/key", `{"a": 1}`, 0o666) }, true, "world writable", ""},
		{"FIFO", func(t *testing.T, d string) {
			if err := syscall.Mkfifo(d+"/key", 0o600); err != nil {
				t.Fatal(err)
			}
		}, true, "a FIFO, not a regular file", ""},
		{"world-writable directory", func(t *testing.T, d string) {
			write(t, d+"/key", `{"a": 1}`, 0o644)
			os.Chmod(d, 0o777)
		}, true, "in a directory that is world writable", `[["key", {"kept": "last good"}]]`}, // good too: never committed
		{"truncated, never committed", func(t *testing.T, d string) { write(t, d+"/key", `{"a": [1, `, 0o644) }, false, "not valid JSON", ""},
		{"world-writable, never committed", func(t *testing.T, d string) { write(t, d+"/key", `{"a": 1}`, 0o666) }, false, "world writable", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir, cacheDir := root+"/local", root+"/cache"
			os.MkdirAll(dir, 0o755)
			os.MkdirAll(cacheDir, 0o700)
			write(t, dir+"/good", `{"good": true}`, 0o644)
			tc.setup(t, dir)
			if tc.committed {
				write(t, cacheDir+"/key.json.last", last, 0o600)
				write(t, cacheDir+"/key.json", "{\n \"newer\": \"never committed\"\n}", 0o600)
			}
			var log bytes.Buffer
			c := &Collector{Paths: []string{dir}, Log: slog.New(slog.NewTextHandler(&log, nil)),
				Globals: collectors.Globals{CacheDir: cacheDir}}
			entries, err := c.Collect(context.Background())
			if !errors.Is(err, collectors.ErrDegraded) || errors.Is(err, collectors.ErrNotAvailable) {
				t.Fatalf("error %v, want degraded", err)
			}
			if !strings.Contains(err.Error(), dir+"/key") || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("reason %q does not name %s/key and %q", err, dir, tc.why)
			}
			want := `[["good", {"good": true}]]`
			if tc.committed {
				want = `[["good", {"good": true}], ["key", {"kept": "last good"}]]`
			}
			if tc.want != "" {
				want = tc.want
			}
			if got := render(entries, nil); got != want {
				t.Fatalf("entries %s, want %s", got, want)
			}
			warn := "level=WARN msg=\"" + dir + "/key: "
			if got := strings.Contains(log.String(), warn); got != tc.committed {
				t.Errorf("WARNING naming the file logged: %v, want %v:\n%s", got, tc.committed, log.String())
			}
		})
	}
}

// A pass whose files are all good is not degraded.
func TestGoodFilesAreNotDegraded(t *testing.T) {
	d := t.TempDir()
	write(t, d+"/a/good", `{"good": true}`, 0o644)
	c := &Collector{Paths: []string{d + "/a"}, Log: logging.Discard, Globals: collectors.Globals{CacheDir: d + "/cache"}}
	if _, err := c.Collect(context.Background()); err != nil {
		t.Fatalf("error %v", err)
	}
}
