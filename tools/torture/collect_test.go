package torture

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

// collectScenario is one os-collect-config --one-time pass over four
// collectors (local, heat_local, request and ec2, the last two against
// httptest servers) after a committed pass with older metadata: some
// keys change, one is new, some stay. Its command is a script that
// records each run outside the node.
type collectScenario struct {
	srv   *httptest.Server
	newer atomic.Bool // what the request collector's server serves
	log   string      // the command's record of its runs (host)
	old   map[string]entry
	want  map[string]entry
	// staged: files the faults left staged, all removed by the next run
	staged       int
	wasCommitted bool
	ranBefore    int
}

const cacheDir = "var/lib/os-collect-config"

// What the cache stages its writes under (collectors/cache).
var cacheStaged = regexp.MustCompile(`^\.os-collect-config-[0-9]+\.tmp$`)

func newCollectScenario(t *testing.T, n *node) *collectScenario {
	s := &collectScenario{}
	host := t.TempDir()
	for _, d := range []string{"old/local", "new/local", "bin", "log"} {
		os.MkdirAll(filepath.Join(host, d), 0o755)
	}
	files := map[string]string{
		"old/local/a.json":    `{"a": {"version": 1, "password": "p1"}}`,
		"old/local/b.json":    `{"b": "stays"}`,
		"new/local/a.json":    `{"a": {"version": 2, "password": "p2"}}`,
		"new/local/b.json":    `{"b": "stays"}`,
		"new/local/c.json":    `{"c": ["new", "key"]}`,
		"old/heat_local.json": `{"hl": 1}`,
		"new/heat_local.json": `{"hl": 2, "more": {"deep": [1, 2, 3]}}`,
		// A command long enough for faults to land in it.
		"bin/command": "#!/bin/sh\necho run >> /srv/log/runs\nsleep 0.05\n",
	}
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(host, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	s.log = filepath.Join(host, "log/runs")
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/request":
			if s.newer.Load() {
				fmt.Fprint(w, `{"request": {"version": 2}, "deployments": []}`)
			} else {
				fmt.Fprint(w, `{"request": {"version": 1}, "deployments": []}`)
			}
		case "/ec2/":
			fmt.Fprint(w, "instance-id\nlocal-ipv4\nplacement/\n")
		case "/ec2/instance-id":
			fmt.Fprint(w, "i-0001")
		case "/ec2/local-ipv4":
			fmt.Fprint(w, "192.0.2.10")
		case "/ec2/placement/":
			fmt.Fprint(w, "availability-zone")
		case "/ec2/placement/availability-zone":
			fmt.Fprint(w, "nova")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	n.bind(host, "srv", false)
	n.bind(filepath.Join(host, "log"), "srv/log", true)
	return s
}

func (s *collectScenario) args(which string) []string {
	return []string{"os-collect-config", "--config-file", "/dev/null", "--one-time",
		"--cachedir", "/" + cacheDir, "--backup-cachedir", "/run/os-collect-config",
		"--local-path", "/srv/" + which + "/local", "--heat_local-path", "/srv/" + which + "/heat_local.json",
		"--request-metadata-url", s.srv.URL + "/request", "--ec2-metadata-url", s.srv.URL + "/ec2",
		"-c", "/srv/bin/command", "local", "heat_local", "request", "ec2"}
}

func (s *collectScenario) setup(t *testing.T, n *node) {
	s.newer.Store(false)
	if err := n.run(n.env(), s.args("old")...); err != nil {
		t.Fatal(err)
	}
	s.old = snapshot(t, n.path(cacheDir))
	s.newer.Store(true)
}

func (s *collectScenario) start(n *node, out io.Writer) *lazyfs.Running {
	return n.start(out, n.env(), s.args("new")...)
}

func (s *collectScenario) learn(t *testing.T, n *node) {
	s.want = snapshot(t, n.path(cacheDir))
}

func (s *collectScenario) reset() { os.Remove(s.log) }

func (s *collectScenario) runs() int {
	b, _ := os.ReadFile(s.log)
	return strings.Count(string(b), "run\n")
}

func (s *collectScenario) afterFault(n *node, completed bool) []string {
	got, err := readTree(n.path(cacheDir))
	if err != nil {
		return []string{err.Error()}
	}
	problems := checkCache(n, got)
	p, staged := oldOrNewCache(got, s.old, s.want)
	problems = append(problems, p...)
	s.staged += staged
	s.wasCommitted, s.ranBefore = committed(got, s.want), s.runs()
	if completed && !s.wasCommitted {
		problems = append(problems, "os-collect-config had exited 0, yet its commit was lost")
	}
	return problems
}

func (s *collectScenario) rerun(n *node) error { return n.run(n.env(), s.args("new")...) }

func (s *collectScenario) afterRerun(n *node) []string {
	var problems []string
	ranAgain := s.runs() > s.ranBefore
	switch {
	case s.wasCommitted && ranAgain:
		problems = append(problems, "a committed change ran its command again")
	case !s.wasCommitted && !ranAgain:
		problems = append(problems, "a change that was not committed did not run its command again")
	}
	got, err := readTree(n.path(cacheDir))
	if err != nil {
		return append(problems, err.Error())
	}
	problems = append(problems, checkCache(n, got)...)
	if d := diffTrees(got, s.want); d != "" {
		problems = append(problems, "the cache after the next run: "+d)
	}
	// The backup copy (in /run) is made by passes with a change, before
	// their command: a kill part way through it is a pass not committed,
	// whose next run copies it again.
	backup, err := readTree(n.path("run/os-collect-config"))
	if err != nil {
		return append(problems, err.Error())
	}
	for rel, e := range backup {
		if strings.HasPrefix(rel, "."+agentstate.PassFile+".") {
			continue // a killed pass's status record: removed once a minute old (agentstate.RemoveStaged)
		}
		var v any
		if err := json.Unmarshal(e.body, &v); err != nil {
			problems = append(problems, fmt.Sprintf("backup file %s does not parse (%d bytes): %v", rel, len(e.body), err))
		}
	}
	return problems
}

// checkCache: every cache file parses as JSON, and os_config_files.json
// names only files that exist.
func checkCache(n *node, got map[string]entry) []string {
	var problems []string
	for rel, e := range got {
		if cacheStaged.MatchString(rel) {
			continue
		}
		var v any
		if err := json.Unmarshal(e.body, &v); err != nil {
			problems = append(problems, fmt.Sprintf("cache file %s does not parse (%d bytes): %v", rel, len(e.body), err))
		}
	}
	if e, ok := got["os_config_files.json"]; ok {
		var list []string
		if err := json.Unmarshal(e.body, &list); err == nil {
			for _, p := range list {
				if _, err := os.Stat(n.path(p)); err != nil {
					problems = append(problems, "os_config_files.json names "+p+", which is not there")
				}
			}
		}
	}
	return problems
}

// oldOrNewCache: each cache file is its old or its new self, or a staged
// file (counted).
func oldOrNewCache(got, old, want map[string]entry) (problems []string, staged int) {
	names := make([]string, 0, len(got))
	for rel := range got {
		names = append(names, rel)
	}
	sort.Strings(names)
	for _, rel := range names {
		e := got[rel]
		w, isNew := want[rel]
		o, isOld := old[rel]
		switch {
		case isNew && same(e, w), isOld && same(e, o):
		case cacheStaged.MatchString(rel):
			staged++
		default:
			problems = append(problems, fmt.Sprintf("cache file %s is neither old nor new (%d bytes, %v)", rel, len(e.body), e.mode))
		}
	}
	return problems, staged
}

// TestFaultCollect kills os-collect-config (with its command), and cuts
// the power, at random instants of a four-collector pass, then runs the
// pass again. TORTURE_KILLS and TORTURE_CUTS set the trials (quick:
// quickFaults each).
func TestFaultCollect(t *testing.T) {
	faultTrials(t, "os-collect-config", newCollectScenario, func(s *collectScenario) string {
		return fmt.Sprintf("%d cache files; staged files left by the faults: %d", len(s.want), s.staged)
	})
}
