// Package docs checks that the documentation runs: every command block
// of the READMEs has a runner (docs_test.go), and every row of
// docs/exit-codes.md is the exit status the programs give
// (exitcodes_test.go).
package docs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// repo is the repository's root.
var repo = func() string {
	r, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return r
}()

var buildDir string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "docs-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		buildDir = dir
		return m.Run()
	}()
	os.Exit(code)
}

var buildOnce = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A BIN of our own: other packages' tests may use the checkout's bin/.
	bin := filepath.Join(buildDir, "bin")
	out, err := exec.CommandContext(ctx, "make", "-s", "-C", repo, "build", "BIN="+bin).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("make build: %v\n%s", err, out)
	}
	return bin, nil
})

// built returns the directory of the built programs (make build).
func built(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
