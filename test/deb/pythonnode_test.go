package deb

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/pkgtest"
)

// newPythonNode is a copy of the cached rootfs (newImageRoot's) in which
// apt-get installed Debian's Python agent (pythonPackages, some 130
// packages with Python itself, from Debian's mirror): a node the Python
// agent runs. The installed tree is kept beside the rootfs for a day
// (pkgtest.AptCache.Node); its apt lists and .debs stay in it, from
// which the way back installs the same packages again with apt-get.
func newPythonNode(t *testing.T) string {
	t.Helper()
	src := imageRootfs(t)
	cache := pkgtest.NewAptCache(t, filepath.Dir(src), src, src, "python-agent")
	node := cache.Node(t, func() string { return imageRootFrom(t, src) }, func(root string) func(args ...string) (string, error) {
		return func(args ...string) (string, error) {
			return chrootFor(t, 15*time.Minute, root, append([]string{"apt-get", "-q", "-y", "--no-install-recommends"}, args...)...)
		}
	}, pythonPackages...)
	root := imageRootFrom(t, node)
	for _, p := range pythonPackages {
		if s := status(t, root, p); !strings.HasPrefix(s, "ii") {
			t.Fatalf("%s: %q in the Python node", p, s)
		}
	}
	return root
}
