// Package torture tries to break the programs the way a node does: every
// process killed at a random instant, or the power cut (lazyfs: what was
// not synced is lost), then the programs run again. Scenarios:
// os-apply-config (the bundled example and the 1000-template bench
// corpus), os-collect-config's four-collector pass, 55-heat-config with
// ten deployments, and the whole chain from os-collect-config to the
// signal, as make install lays it out. After every trial: every output
// file old or new with its mode and owner, cache files that parse and
// commit as docs/durability.md says, every deployment run at most once
// and signalled, nothing staged left behind.
//
// TORTURE_KILLS and TORTURE_CUTS set the trials per case (defaults: the
// quick mode of make test, some 60 kills and 50 cuts in all, about 90 s
// on two idle cores, see quickFaults; make torture runs 400 of each per
// case); TORTURE_OS_APPLY_CONFIG runs the
// kill trials of os-apply-config on another build. -short skips it all;
// without FUSE or root the power cuts skip, unless REQUIRE_TORTURE=1.
package torture

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// build builds the agent and returns the path of its os-apply-config link.
func build(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "tripleo-agent"), "./cmd/tripleo-agent")
	cmd.Dir, cmd.Env = repoRoot(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	oac := filepath.Join(dir, "os-apply-config")
	if err := os.Symlink("tripleo-agent", oac); err != nil {
		t.Fatal(err)
	}
	return oac
}

// corpus writes the bench corpus (tools/oacbench) and returns its
// templates, its metadata and the metadata with the third file modified.
func corpus(t *testing.T) (templates string, meta, modified []string) {
	t.Helper()
	cmd := exec.Command("go", "run", "./tools/oacbench", "-write-corpus", t.TempDir())
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oacbench -write-corpus: %v", err)
	}
	p := strings.Fields(string(out))
	if len(p) != 5 {
		t.Fatalf("oacbench -write-corpus printed %q", out)
	}
	return p[0], p[1:4], []string{p[1], p[2], p[4]}
}

// scratch is a directory for the output trees: on tmpfs when there is one
// (the trials are about processes, not disks, and thousands of file
// creations are slow on some VMs' /tmp), else under t.TempDir.
func scratch(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "torture-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// entry is a file of an output tree.
type entry struct {
	mode     fs.FileMode
	uid, gid uint32
	body     []byte
}

// snapshot reads every file under dir (not directories).
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	tree, err := readTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// readTree reads every file under dir (not directories); none if there
// is no dir.
func readTree(dir string) (map[string]entry, error) {
	tree := map[string]entry{}
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		return tree, nil // killed before it made the output directory
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st := fi.Sys().(*syscall.Stat_t)
		tree[rel] = entry{mode: fi.Mode(), uid: st.Uid, gid: st.Gid, body: b}
		return nil
	})
	return tree, err
}

func render(oac, templates, out string, meta []string) *exec.Cmd {
	args := append([]string{"-t", templates, "-o", out, "-m"}, meta...)
	cmd := exec.Command(oac, append(args, "--fallback-metadata")...)
	return cmd
}

func mustRender(t *testing.T, oac, templates, out string, meta []string) time.Duration {
	t.Helper()
	t0 := time.Now()
	if b, err := render(oac, templates, out, meta).CombinedOutput(); err != nil {
		t.Fatalf("os-apply-config: %v\n%s", err, b)
	}
	return time.Since(t0)
}

// What a killed os-apply-config may leave beside its targets: its staged
// files and new trees, under names directory readers skip
// (applyconfig/writer).
var stagedName = regexp.MustCompile(`^\.os-apply-config-[0-9]+-[a-z0-9_]{8}\.tmp$`)

// stagedBeside counts the staged trees beside out: when out is not there,
// a fresh render makes it as a new tree, staged in its parent.
func stagedBeside(out string) (int, error) {
	entries, err := os.ReadDir(filepath.Dir(out))
	n := 0
	for _, e := range entries {
		if stagedName.MatchString(e.Name()) {
			n++
		}
	}
	return n, err
}

// isStaged reports whether rel is a staged file or in a staged tree.
func isStaged(rel string) bool {
	for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		if stagedName.MatchString(part) {
			return true
		}
	}
	return false
}

// TestKillApplyConfig kills os-apply-config at a random instant of a
// render of the 1000-template bench corpus, in two cases: a first render
// into an empty tree, and a change of metadata over a rendered tree; then
// runs it again to completion. Every file must be its old or its new self
// after the kill, anything else only a staged file, and after the second
// run the tree must be exactly the new one.
func TestKillApplyConfig(t *testing.T) {
	n := count(t, "TORTURE_KILLS", quickCorpusKills)
	oac := os.Getenv("TORTURE_OS_APPLY_CONFIG") // another build, to see the harness catch it
	if oac == "" {
		oac = build(t)
	}
	templates, meta, modified := corpus(t)
	work := scratch(t)
	oldTree := filepath.Join(work, "old")
	mustRender(t, oac, templates, oldTree, meta)
	freshNew := filepath.Join(work, "fresh-new")
	freshTime := mustRender(t, oac, templates, freshNew, meta)
	changeNew := filepath.Join(work, "change-new")
	if err := exec.Command("cp", "-a", oldTree, changeNew).Run(); err != nil {
		t.Fatal(err)
	}
	changeTime := mustRender(t, oac, templates, changeNew, modified)

	cases := []struct {
		name     string
		old      string // "" : nothing
		meta     []string
		want     map[string]entry
		duration time.Duration
	}{
		{"fresh", "", meta, snapshot(t, freshNew), freshTime},
		{"change", oldTree, modified, snapshot(t, changeNew), changeTime},
	}
	old := snapshot(t, oldTree)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := map[string]entry{}
			if c.old != "" {
				before = old
			}
			var leftovers, problems int
			for i := range n {
				out := filepath.Join(work, "out")
				os.RemoveAll(out)
				if c.old != "" {
					if err := exec.Command("cp", "-a", c.old, out).Run(); err != nil {
						t.Fatal(err)
					}
				}
				delay := faultAt(i, n, c.duration*6/5)
				killAfter(t, render(oac, templates, out, c.meta), delay)
				found, staged := oldOrNew(snapshot(t, out), before, c.want)
				beside, err := stagedBeside(out)
				if err != nil {
					t.Fatal(err)
				}
				leftovers, problems = leftovers+staged+beside, problems+len(found)
				for _, p := range found {
					t.Errorf("trial %d (killed after %v): %s", i, delay, p)
				}
				mustRender(t, oac, templates, out, c.meta)
				again := snapshot(t, out)
				if diff := diffTrees(again, c.want); diff != "" {
					t.Fatalf("trial %d: after the run that followed the kill: %s", i, diff)
				}
				if beside, err := stagedBeside(out); beside != 0 || err != nil {
					t.Fatalf("trial %d: after the run that followed the kill: %d staged trees beside the output (%v)", i, beside, err)
				}
			}
			t.Logf("TORTURE os-apply-config %s: %d kills within %v; files torn or lost %d; staged files left by the kills %d, all removed by the next run",
				c.name, n, c.duration*6/5, problems, leftovers)
		})
	}
}

// killAfter starts cmd and SIGKILLs it after delay (if it still runs).
func killAfter(t *testing.T, cmd *exec.Cmd, delay time.Duration) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), delay)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
}

func same(a, b entry) bool {
	return a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && bytes.Equal(a.body, b.body)
}

// diffTrees says how got differs from want ("" if not at all).
func diffTrees(got, want map[string]entry) string {
	var d []string
	for rel, e := range got {
		if w, ok := want[rel]; !ok {
			d = append(d, "extra "+rel)
		} else if !same(e, w) {
			d = append(d, "differs "+rel)
		}
	}
	for rel := range want {
		if _, ok := got[rel]; !ok {
			d = append(d, "missing "+rel)
		}
	}
	if len(d) > 5 {
		d = append(d[:5], fmt.Sprintf("and %d more", len(d)-5))
	}
	return strings.Join(d, ", ")
}
