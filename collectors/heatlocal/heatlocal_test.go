package heatlocal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/collectors"
	"github.com/tripleo-go/agent/internal/difftest"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/pyjson"
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
				got = pyjson.Dumps([]pyjson.Value{[]pyjson.Value{entries[0].Name, entries[0].Content}})
			}
			if want := strings.TrimSpace(string(out)); got != want {
				t.Fatalf("reference %s\nours      %s", want, got)
			}
		})
	}
}
