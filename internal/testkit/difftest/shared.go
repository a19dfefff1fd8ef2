package difftest

import (
	"os"
	"sync"
	"testing"
)

// SharedAgent is the multi-call binary built once per test binary, on
// first use, for the tests of a package that run programs as processes.
// Remove, called from TestMain after m.Run, deletes it.
type SharedAgent struct {
	programs []string
	once     sync.Once
	dir      string
	err      error
}

// NewSharedAgent names the programs to link.
func NewSharedAgent(programs ...string) *SharedAgent { return &SharedAgent{programs: programs} }

// Dir is the directory of the binary and its links, built on the first
// call; the test is skipped under -short (a build takes seconds).
func (a *SharedAgent) Dir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the agent")
	}
	a.once.Do(func() {
		if a.dir, a.err = os.MkdirTemp("", "agent-bin"); a.err == nil {
			a.err = BuildAgent(a.dir, a.programs...)
		}
	})
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a.dir
}

// Remove deletes the build, if there was one.
func (a *SharedAgent) Remove() {
	if a.dir != "" {
		os.RemoveAll(a.dir)
	}
}
