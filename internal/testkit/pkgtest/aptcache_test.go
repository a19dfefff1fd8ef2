package pkgtest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeApt is apt-get in a root, as far as the cache sees it: update
// writes the lists (version v), install downloads into the archives the
// .debs the lists name that are not there yet, autoclean drops those the
// lists do not name. A failure of install is asked with failInstall.
type fakeApt struct {
	root        string
	v           string
	calls       []string
	failInstall bool
}

func (f *fakeApt) run(args ...string) (string, error) {
	f.calls = append(f.calls, args[0])
	lists := filepath.Join(f.root, "var/lib/apt/lists")
	archives := filepath.Join(f.root, "var/cache/apt/archives")
	os.MkdirAll(lists, 0o755)
	os.MkdirAll(archives, 0o755)
	switch args[0] {
	case "update":
		return "", os.WriteFile(filepath.Join(lists, "Packages"), []byte(f.v), 0o644)
	case "install":
		if f.failInstall {
			f.failInstall = false
			return "E: 404", errors.New("exit status 100")
		}
		b, err := os.ReadFile(filepath.Join(lists, "Packages"))
		if err != nil {
			return "E: no lists", err
		}
		deb := filepath.Join(archives, "p_"+string(b)+".deb")
		if _, err := os.Stat(deb); err == nil {
			return "Need to get 0 B/1 kB of archives.", nil
		}
		return "Need to get 1 kB of archives.", os.WriteFile(deb, []byte("deb"), 0o644)
	case "autoclean":
		b, _ := os.ReadFile(filepath.Join(lists, "Packages"))
		ents, _ := os.ReadDir(archives)
		for _, e := range ents {
			if e.Name() != "p_"+string(b)+".deb" {
				os.Remove(filepath.Join(archives, e.Name()))
			}
		}
		return "", nil
	}
	return "", errors.New("unexpected " + args[0])
}

func debsIn(t *testing.T, dir string) []string {
	ents, _ := os.ReadDir(dir)
	var l []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".deb") {
			l = append(l, e.Name())
		}
	}
	return l
}

func TestAptCache(t *testing.T) {
	cacheDir := t.TempDir()
	newRoot := func() string {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc/apt"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(root, "etc/apt/sources.list"), []byte("deb http://deb.debian.org/debian bookworm main\n"), 0o644)
		return root
	}
	install := func(v string, failInstall bool) (*fakeApt, AptCache) {
		root := newRoot()
		c := NewAptCache(t, cacheDir, "/cache/rootfs-bookworm-v1", root, "python")
		f := &fakeApt{root: root, v: v, failInstall: failInstall}
		c.Install(t, root, f.run, "p")
		return f, c
	}
	for _, step := range []struct {
		what        string
		v           string
		age         time.Duration // of the cached lists, before the step
		failInstall bool
		calls       []string
		cached      []string
	}{
		{what: "an empty cache: the network", v: "1", calls: []string{"update", "install", "autoclean"}, cached: []string{"p_1.deb"}},
		{what: "fresh lists: from the cache alone", v: "1", calls: []string{"install"}, cached: []string{"p_1.deb"}},
		{what: "stale lists: updated, the old .deb dropped", v: "2", age: ListsMaxAge + time.Hour,
			calls: []string{"update", "install", "autoclean"}, cached: []string{"p_2.deb"}},
		{what: "an install from the cache that fails: updated", v: "2", failInstall: true,
			calls: []string{"install", "update", "install", "autoclean"}, cached: []string{"p_2.deb"}},
	} {
		c := NewAptCache(t, cacheDir, "/cache/rootfs-bookworm-v1", newRoot(), "python")
		if step.age != 0 {
			old := time.Now().Add(-step.age)
			if err := os.Chtimes(filepath.Join(c.Dir, "lists"), old, old); err != nil {
				t.Fatal(err)
			}
		}
		f, c := install(step.v, step.failInstall)
		if !slices.Equal(f.calls, step.calls) {
			t.Errorf("%s: apt-get %v, want %v", step.what, f.calls, step.calls)
		}
		if got := debsIn(t, filepath.Join(c.Dir, "archives")); !slices.Equal(got, step.cached) {
			t.Errorf("%s: the cache holds %v, want %v", step.what, got, step.cached)
		}
		if got := debsIn(t, filepath.Join(f.root, "var/cache/apt/archives")); !slices.Contains(got, "p_"+step.v+".deb") {
			t.Errorf("%s: the root has %v", step.what, got)
		}
	}
	// Another rootfs or other sources: another cache.
	root := newRoot()
	a := NewAptCache(t, cacheDir, "/cache/rootfs-bookworm-v1", root, "python")
	if b := NewAptCache(t, cacheDir, "/cache/rootfs-bookworm-v2", root, "python"); b.Dir == a.Dir {
		t.Errorf("two rootfs share %s", a.Dir)
	}
	os.WriteFile(filepath.Join(root, "etc/apt/sources.list"), []byte("deb http://example.org/debian bookworm main\n"), 0o644)
	if b := NewAptCache(t, cacheDir, "/cache/rootfs-bookworm-v1", root, "python"); b.Dir == a.Dir {
		t.Errorf("two sources share %s", a.Dir)
	}
}

// Node installs once, then hands out the kept tree until it is older
// than ListsMaxAge.
func TestAptCacheNode(t *testing.T) {
	c := AptCache{Dir: filepath.Join(t.TempDir(), "python")}
	var made []string
	newRoot := func() string {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "var/lib/dpkg"), 0o755)
		os.MkdirAll(filepath.Join(root, "etc/apt"), 0o755)
		made = append(made, root)
		return root
	}
	aptGet := func(root string) func(args ...string) (string, error) {
		f := &fakeApt{root: root, v: "1"}
		return func(args ...string) (string, error) {
			out, err := f.run(args...)
			if args[0] == "install" && err == nil {
				err = os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), []byte("Package: p\n"), 0o644)
			}
			return out, err
		}
	}
	node := c.Node(t, newRoot, aptGet, "p")
	if b, err := os.ReadFile(filepath.Join(node, "var/lib/dpkg/status")); err != nil || string(b) != "Package: p\n" {
		t.Fatalf("the node's dpkg status: %q (%v)", b, err)
	}
	if again := c.Node(t, newRoot, aptGet, "p"); again != node || len(made) != 1 {
		t.Errorf("a fresh node was installed again (%d roots made)", len(made))
	}
	old := time.Now().Add(-ListsMaxAge - time.Hour)
	os.Chtimes(filepath.Join(node, "var/lib/dpkg/status"), old, old)
	c.Node(t, newRoot, aptGet, "p")
	if len(made) != 2 {
		t.Errorf("a stale node was not installed anew (%d roots made)", len(made))
	}
}
