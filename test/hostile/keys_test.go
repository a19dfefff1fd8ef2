package hostile

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Hostile cache keys, from Heat's deployment names (through the request
// collector, which explodes deployments as the heat collector does) and
// from the local collector's file names: each refused with one line
// naming it, nothing written outside the cache, the good keys stored and
// given to the command, exit 0 (docs/exit-codes.md: a refused key does
// not fail the pass).
func TestCollectorKeys(t *testing.T) {
	agent.Dir(t)
	long := strings.Repeat("L", 250)
	badDeployments := []string{"../x", "/abs", "a\x00b", "", ".", "..", "a:b", "new\nline", long, "os_config_files", "request", "local"}
	var deployments []map[string]any
	for _, n := range append(badDeployments, "good-deployment") {
		deployments = append(deployments, map[string]any{"name": n, "group": "os-apply-config", "config": map[string]any{"from": n}})
	}
	body, _ := json.Marshal(map[string]any{"top": "metadata", "deployments": deployments})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()

	root := t.TempDir()
	local := filepath.Join(root, "local")
	badFiles := []string{"new\nfile", "co:lon", strings.Repeat("F", 250), "request", "del\x7f"}
	for _, n := range append(slices.Clone(badFiles), "good-file") {
		doc, _ := json.Marshal(map[string]string{"file": n})
		write(t, filepath.Join(local, n), string(doc), 0o600)
	}
	if err := syscall.Mkfifo(filepath.Join(local, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	r := run(t, occEnv(root), nil, "os-collect-config",
		"--config-file", "/dev/null", "--one-time", "--cachedir", root+"/cache", "--backup-cachedir", root+"/backup",
		"--request-metadata-url", srv.URL, "--local-path", local,
		"-c", `printf %s "$$OS_CONFIG_FILES" > `+root+`/files`, "request", "local")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r.stderr)
	}
	refused := r.lines("Refusing metadata key")
	bad := append(slices.Clone(badDeployments), badFiles...)
	for _, n := range bad {
		q := strconv.Quote(n)
		hits, want := 0, 0
		for _, l := range refused {
			if strings.Contains(l, " "+q+" ") || strings.HasSuffix(l, " "+q) || strings.Contains(l, "key "+q) {
				hits++
			}
		}
		for _, m := range bad {
			if m == n {
				want++
			}
		}
		if hits != want {
			t.Errorf("key %s: %d lines name it, want %d:\n%s", q, hits, want, strings.Join(refused, "\n"))
		}
	}
	if want := len(badDeployments) + len(badFiles); len(refused) != want {
		t.Errorf("%d refusals, want %d:\n%s", len(refused), want, r.stderr)
	}
	if l := r.lines("fifo"); len(l) != 1 || !strings.Contains(l[0], "is a FIFO, not a regular file") {
		t.Errorf("the FIFO's lines: %q", l)
	}
	c := root + "/cache/"
	if got, want := read(t, root+"/files"), c+"request.json:"+c+"good-deployment.json:"+c+"good-file.json"; got != want {
		t.Errorf("OS_CONFIG_FILES=%q\nwant %q", got, want)
	}
	if got := read(t, c+"request.json"); !strings.Contains(got, `"top": "metadata"`) {
		t.Errorf("request.json is not the collector's document:\n%s", got)
	}
	onlyUnder(t, tree(t, root), before, "cache/", "backup/", "status/", "files")
	for _, p := range tree(t, root+"/cache") {
		key, _, _ := strings.Cut(p, ".json")
		if !slices.Contains([]string{"request", "good-deployment", "good-file", "os_config_files"}, key) {
			t.Errorf("the cache holds %q", p)
		}
	}
	t.Logf("refused, one line each:\n%s", strings.Join(refused, "\n"))
}
