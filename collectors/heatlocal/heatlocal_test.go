package heatlocal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/testkit/difftest"
)

func TestAgainstReference(t *testing.T) {
	difftest.Oracle(t)
	for _, tc := range []struct {
		name  string
		files map[string]string
		paths []string
	}{
		{"shallow merge, later wins", map[string]string{"a": `{"x": {"k": 1}, "y": 1}`, "b": `{"x": {"j": 2}, "z": 3}`}, []string{"a", "b"}},
		{"missing and broken skipped", map[string]string{"a": `{"x": 1}`, "bad": `{"y": `}, []string{"missing", "bad", "a"}},
		{"nothing usable", map[string]string{"bad": `nope`}, []string{"bad", "missing"}},
		{"empty object", map[string]string{"e": `{}`}, []string{"e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			for n, body := range tc.files {
				os.WriteFile(d+"/"+n, []byte(body), 0o644)
			}
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, d+"/"+p)
			}
			out, err := exec.Command("/usr/bin/python3", append([]string{"../testdata/collector_oracle.py", Name}, paths...)...).Output()
			if err != nil {
				if os.Getenv("REQUIRE_REFERENCE") == "1" {
					t.Fatalf("oracle: %v", err)
				}
				t.Skipf("reference not available: %v", err)
			}
			entries, cerr := (&Collector{Paths: paths, Log: logging.Discard}).Collect(context.Background())
			got := `"unavailable"`
			if !errors.Is(cerr, collectors.ErrNotAvailable) {
				got = jsondoc.Dumps([]jsondoc.Value{[]jsondoc.Value{entries[0].Name, entries[0].Content}})
			}
			if want := strings.TrimSpace(string(out)); got != want {
				t.Fatalf("reference %s\nours      %s", want, got)
			}
		})
	}
}

// Deliberate fix: a configured path that is a FIFO is skipped with one
// line naming it (the reference blocked on it forever).
func TestFIFOIsSkipped(t *testing.T) {
	d := t.TempDir()
	if err := syscall.Mkfifo(d+"/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d+"/a", []byte(`{"x": 1}`), 0o644)
	var log strings.Builder
	c := &Collector{Paths: []string{d + "/fifo", d + "/a"}, Log: logging.New(&log, logging.Options{})}
	done := make(chan []collectors.Entry, 1)
	go func() { e, _ := c.Collect(context.Background()); done <- e }()
	select {
	case got := <-done:
		if len(got) != 1 || jsondoc.Dumps(got[0].Content) != `{"x": 1}` {
			t.Fatalf("entries %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Collect blocked on the FIFO")
	}
	if want := d + "/fifo cannot be read (" + d + "/fifo is a FIFO, not a regular file)"; !strings.Contains(log.String(), want) {
		t.Fatalf("log lacks %q:\n%s", want, log.String())
	}
}

// Deliberate fix (issue 22): a file that exists but cannot be used keeps
// the heat_local key's last committed data whole (not a merge without
// that file's keys), with a WARNING naming the file, and degrades the
// source; never committed, the other files are merged as the reference
// does, and the source is still degraded.
func TestBadFileKeepsLastCommittedData(t *testing.T) {
	for _, tc := range []struct {
		name      string
		files     map[string]string
		committed bool
		want      string // the entry's content; "" for unavailable
		why       string
	}{
		{"truncated, committed", map[string]string{"a": `{"x": 1}`, "b": `{"y": `}, true, `{"kept": 1}`, "b: not valid JSON"},
		{"truncated, never committed", map[string]string{"a": `{"x": 1}`, "b": `{"y": `}, false, `{"x": 1}`, "b: not valid JSON"},
		{"only file truncated, never committed", map[string]string{"b": `{"y": `}, false, "", "b: not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			for n, body := range tc.files {
				os.WriteFile(d+"/"+n, []byte(body), 0o644)
			}
			os.Mkdir(d+"/cache", 0o700)
			if tc.committed {
				os.WriteFile(d+"/cache/heat_local.json.last", []byte("{\n \"kept\": 1\n}"), 0o600)
			}
			var log strings.Builder
			c := &Collector{Paths: []string{d + "/a", d + "/b"}, Log: logging.New(&log, logging.Options{}),
				Globals: collectors.Globals{CacheDir: d + "/cache"}}
			entries, err := c.Collect(context.Background())
			if err == nil || !strings.Contains(err.Error(), d+"/"+tc.why) {
				t.Fatalf("error %v, want one naming %s/%s", err, d, tc.why)
			}
			if tc.want == "" {
				if !errors.Is(err, collectors.ErrNotAvailable) {
					t.Fatalf("error %v, want unavailable", err)
				}
				return
			}
			if !errors.Is(err, collectors.ErrDegraded) {
				t.Fatalf("error %v, want degraded", err)
			}
			if len(entries) != 1 || jsondoc.Dumps(entries[0].Content) != tc.want {
				t.Fatalf("entries %v, want %s", entries, tc.want)
			}
			warned := strings.Contains(log.String(), "WARNING") && strings.Contains(log.String(), d+"/b: ")
			if warned != tc.committed {
				t.Errorf("WARNING naming the file: %v, want %v:\n%s", warned, tc.committed, log.String())
			}
		})
	}
}
