package torture

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/tools/torture/lazyfs"
)

// applyScenario is os-apply-config rendering templates into /out on the
// node, over nothing (fresh) or over an earlier render.
type applyScenario struct {
	templates        string   // on the node
	oldMeta, newMeta []string // on the node; oldMeta nil: a fresh render
	old, want        map[string]entry
	staged           int // staged files and trees the faults left, all swept by the next run
}

func (s *applyScenario) args(meta []string) []string {
	args := append([]string{"os-apply-config", "-t", s.templates, "-o", "/out", "-m"}, meta...)
	return append(args, "--fallback-metadata")
}

func (s *applyScenario) setup(t *testing.T, n *node) {
	if s.oldMeta != nil {
		if err := n.run(n.env(), s.args(s.oldMeta)...); err != nil {
			t.Fatal(err)
		}
	}
	s.old = snapshot(t, n.path("out"))
}

func (s *applyScenario) start(n *node, out io.Writer) *lazyfs.Running {
	return n.start(out, n.env(), s.args(s.newMeta)...)
}

func (s *applyScenario) learn(t *testing.T, n *node) { s.want = snapshot(t, n.path("out")) }
func (s *applyScenario) reset()                      {}

func (s *applyScenario) afterFault(n *node, completed bool) []string {
	got, err := readTree(n.path("out"))
	if err != nil {
		return []string{err.Error()}
	}
	problems, staged := oldOrNew(got, s.old, s.want)
	beside, err := stagedBeside(n.path("out"))
	if err != nil {
		return append(problems, err.Error())
	}
	s.staged += staged + beside
	if completed {
		if d := diffTrees(withoutStaged(got), s.want); d != "" {
			problems = append(problems, "os-apply-config had exited 0, yet: "+d)
		}
	}
	return problems
}

func (s *applyScenario) rerun(n *node) error { return n.run(n.env(), s.args(s.newMeta)...) }

func (s *applyScenario) afterRerun(n *node) []string {
	got, err := readTree(n.path("out"))
	if err != nil {
		return []string{err.Error()}
	}
	if d := diffTrees(got, s.want); d != "" {
		return []string{"after the next run: " + d}
	}
	if beside, err := stagedBeside(n.path("out")); beside != 0 || err != nil {
		return []string{fmt.Sprintf("after the next run: %d staged trees beside /out (%v)", beside, err)}
	}
	return nil
}

// oldOrNew checks that every file of got is its old or its new self, or
// a staged file, and that no old file that the new render keeps is gone.
func oldOrNew(got, old, want map[string]entry) (problems []string, staged int) {
	for rel, e := range got {
		w, isNew := want[rel]
		o, isOld := old[rel]
		switch {
		case isNew && same(e, w), isOld && same(e, o):
		case !isNew && !isOld && isStaged(rel):
			staged++
		default:
			problems = append(problems, fmt.Sprintf("%s is neither old nor new (%d bytes, %v, %d:%d)", rel, len(e.body), e.mode, e.uid, e.gid))
		}
	}
	for rel := range old {
		if _, kept := want[rel]; !kept {
			continue // the new render deletes it: gone is new
		}
		if _, ok := got[rel]; !ok {
			problems = append(problems, rel+" is gone")
		}
	}
	return problems, staged
}

func withoutStaged(tree map[string]entry) map[string]entry {
	out := map[string]entry{}
	for rel, e := range tree {
		if !isStaged(rel) {
			out[rel] = e
		}
	}
	return out
}

// TestFaultApplyConfig cuts the power (and, for the bundled example,
// kills the program) at random instants of os-apply-config renders: the
// bundled example (examples/node) and the 1000-template bench corpus,
// each fresh and over an earlier render. After the fault every file is
// its old or its new self (bytes, mode, owner), a run that had ended is
// entirely there, and the next run leaves exactly the new tree.
// TORTURE_CUTS and TORTURE_KILLS set the trials per case (quick:
// quickExample for the example, quickCorpusCuts for the corpus).
func TestFaultApplyConfig(t *testing.T) {
	cuts, kills := count(t, "TORTURE_CUTS", 0), count(t, "TORTURE_KILLS", 0)
	agent := installed(t, "")
	templates, meta, modified := corpus(t)
	corpusDir := filepath.Dir(templates)
	onNode := func(dir string, paths []string) []string {
		out := make([]string, len(paths))
		for i, p := range paths {
			rel, _ := filepath.Rel(corpusDir, p)
			out[i] = filepath.Join(dir, rel)
		}
		return out
	}
	example := filepath.Join(repoRoot(), "examples/node")
	exMeta := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "/srv/example/metadata/"+n)
		}
		return out
	}
	cases := []struct {
		name   string
		trials int
		sc     *applyScenario
	}{
		{"example/fresh", quickExample, &applyScenario{templates: "/srv/example/templates", newMeta: exMeta("10-ec2.json", "20-heat_local.json", "30-deployments.json")}},
		{"example/change", quickExample, &applyScenario{templates: "/srv/example/templates", oldMeta: exMeta("10-ec2.json", "20-heat_local.json"),
			newMeta: exMeta("10-ec2.json", "20-heat_local.json", "30-deployments.json")}},
		{"corpus/fresh", quickCorpusCuts, &applyScenario{templates: onNode("/srv/corpus", []string{templates})[0], newMeta: onNode("/srv/corpus", meta)}},
		{"corpus/change", quickCorpusCuts, &applyScenario{templates: onNode("/srv/corpus", []string{templates})[0], oldMeta: onNode("/srv/corpus", meta),
			newMeta: onNode("/srv/corpus", modified)}},
	}
	for _, c := range cases {
		faults := []fault{cut}
		if strings.HasPrefix(c.name, "example/") {
			faults = append(faults, kill) // the corpus's: TestKillApplyConfig
		}
		for _, f := range faults {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				n := newNode(t, agent)
				n.bind(example, "srv/example", false)
				n.bind(corpusDir, "srv/corpus", false)
				trials := c.trials
				if env := map[fault]int{cut: cuts, kill: kills}[f]; env > 0 {
					trials = env
				}
				sc := *c.sc
				res := runTrials(t, n, &sc, f, trials)
				report(t, "os-apply-config "+c.name, f, res)
				t.Logf("TORTURE os-apply-config %s %s: %d files; staged files left by the faults: %d, all removed by the next run; syncs of a run: %+v",
					c.name, f, len(sc.want), sc.staged, n.fs.Stats())
			})
		}
	}
}
