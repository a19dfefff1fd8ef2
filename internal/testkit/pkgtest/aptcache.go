package pkgtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// AptCache keeps what apt-get fetched into a copy of the cached Debian
// rootfs, its package lists and the .debs it downloaded, beside that
// rootfs, so that the next run's apt-get in a fresh copy installs the
// same Debian packages without the network. apt-get still resolves and
// installs them; it checks each cached .deb against the lists' hashes
// as it would a download. Lists older than ListsMaxAge are not used (the
// test runs apt-get update and the cache is written anew), and a failed
// install from the cache is retried after apt-get update: a stale or
// broken cache refreshes itself.
type AptCache struct {
	// Dir holds lists/, archives/ and the lock; one per rootfs, sources
	// and set of packages (see NewAptCache).
	Dir string
}

// ListsMaxAge is how long cached lists stand for apt-get update.
const ListsMaxAge = 24 * time.Hour

// NewAptCache is the cache under cacheDir (LAB_CACHE_DIR) for the
// rootfs (its directory name), the sources root (a copy of it) uses and
// name (what is installed from it).
func NewAptCache(t testing.TB, cacheDir, rootfs, root, name string) AptCache {
	t.Helper()
	h := sha256.New()
	for _, f := range []string{"etc/apt/sources.list", "etc/apt/sources.list.d"} {
		p := filepath.Join(root, f)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				b, _ := os.ReadFile(filepath.Join(p, e.Name()))
				fmt.Fprintf(h, "%s\x00%s\x00", e.Name(), b)
			}
		} else if b, err := os.ReadFile(p); err == nil {
			fmt.Fprintf(h, "sources.list\x00%s\x00", b)
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:12]
	return AptCache{Dir: filepath.Join(cacheDir, "apt", filepath.Base(rootfs)+"-"+key, name)}
}

// lock takes the cache's flock (exclusive or shared) until the returned
// function is called: test binaries of several packages run at once.
func (c AptCache) lock(t testing.TB, how int) func() {
	t.Helper()
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(c.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// Restore copies the cached .debs into root's apt archives and, when the
// cached lists are younger than ListsMaxAge, the lists too; it reports
// whether it did (apt-get update is then not needed).
func (c AptCache) Restore(t testing.TB, root string) (lists bool) {
	t.Helper()
	unlock := c.lock(t, syscall.LOCK_SH)
	defer unlock()
	if _, err := os.Stat(filepath.Join(c.Dir, "archives")); err == nil {
		copyTree(t, filepath.Join(c.Dir, "archives"), filepath.Join(root, "var/cache/apt/archives"))
	}
	fi, err := os.Stat(filepath.Join(c.Dir, "lists"))
	if err != nil || time.Since(fi.ModTime()) > ListsMaxAge {
		return false
	}
	copyTree(t, filepath.Join(c.Dir, "lists"), filepath.Join(root, "var/lib/apt/lists"))
	return true
}

// Save replaces the cache's .debs by root's apt archives and, with
// lists (fresh from apt-get update), its lists by root's.
func (c AptCache) Save(t testing.TB, root string, lists bool) {
	t.Helper()
	unlock := c.lock(t, syscall.LOCK_EX)
	defer unlock()
	dirs := []struct{ from, to string }{{"var/cache/apt/archives", "archives"}}
	if lists {
		dirs = append(dirs, struct{ from, to string }{"var/lib/apt/lists", "lists"})
	}
	for _, d := range dirs {
		tmp := filepath.Join(c.Dir, d.to+".new")
		os.RemoveAll(tmp)
		copyTree(t, filepath.Join(root, d.from), tmp)
		os.RemoveAll(filepath.Join(tmp, "partial"))
		os.Remove(filepath.Join(tmp, "lock"))
		old := filepath.Join(c.Dir, d.to+".old")
		os.RemoveAll(old)
		os.Rename(filepath.Join(c.Dir, d.to), old)
		if err := os.Rename(tmp, filepath.Join(c.Dir, d.to)); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(old)
	}
}

// Install runs apt-get install of pkgs in root through the cache:
// restored lists and .debs, apt-get update only when the lists are not
// cached (or the install from the cache fails), and the cache saved
// after. aptGet runs apt-get in root with its arguments.
func (c AptCache) Install(t testing.TB, root string, aptGet func(args ...string) (string, error), pkgs ...string) string {
	t.Helper()
	install := append([]string{"install"}, pkgs...)
	if c.Restore(t, root) {
		out, err := aptGet(install...)
		if err == nil {
			if !strings.Contains(out, "Need to get 0 B/") {
				c.Save(t, root, false) // a .deb the cache lacked
			}
			return out
		}
		t.Logf("apt-get install from the cache failed, updating the lists: %v\n%s", err, out)
	}
	if out, err := aptGet("update"); err != nil {
		t.Fatalf("apt-get update: %v\n%s", err, out)
	}
	out, err := aptGet(install...)
	if err != nil {
		t.Fatalf("apt-get %s: %v\n%s", strings.Join(install, " "), err, out)
	}
	// The .debs the new lists no longer name go (cached ones included).
	if out, err := aptGet("autoclean"); err != nil {
		t.Fatalf("apt-get autoclean: %v\n%s", err, out)
	}
	c.Save(t, root, true)
	return out
}

// copyTree copies the files of src into dst (created), keeping modes.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", src+"/.", dst+"/").CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", src, dst, err, out)
	}
}

// Node is a tree kept in the cache: a copy of the rootfs src in which
// apt-get installed pkgs (through the cache, Install), made by newRoot
// (a copy of src, in the caller's temporary directory, ready for
// apt-get) when missing or older than ListsMaxAge, so that Debian's
// updates reach it. It returns the tree's path, which the caller copies
// and never changes. Installing Python and its modules takes a minute
// and more of CPU: tests whose subject is not that install start from
// the installed tree. Its apt lists and .debs stay in it.
func (c AptCache) Node(t testing.TB, newRoot func() string, aptGet func(root string) func(args ...string) (string, error), pkgs ...string) string {
	t.Helper()
	node := filepath.Join(c.Dir, "node")
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Its own lock: Install takes the cache's.
	lock, err := os.OpenFile(filepath.Join(c.Dir, ".node-lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		defer lock.Close()
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(node, "var/lib/dpkg/status")); err == nil && time.Since(fi.ModTime()) <= ListsMaxAge {
		t.Logf("%s as apt-get installed them at %s (%s)", strings.Join(pkgs, " "), fi.ModTime().Format(time.RFC3339), node)
		return node
	}
	start := time.Now()
	root := newRoot()
	c.Install(t, root, aptGet(root), pkgs...)
	tmp := node + ".new"
	os.RemoveAll(tmp)
	copyTree(t, root, tmp)
	// Its age is the install's, whatever dpkg's last write was.
	now := time.Now()
	if err := os.Chtimes(filepath.Join(tmp, "var/lib/dpkg/status"), now, now); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(node)
	if err := os.Rename(tmp, node); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s installed with apt-get in %s, kept in %s", strings.Join(pkgs, " "), time.Since(start).Round(time.Second), node)
	return node
}
