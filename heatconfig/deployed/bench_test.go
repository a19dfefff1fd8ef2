package deployed

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tripleo-go/agent/internal/agentstate"
)

// A state directory as a long-lived TripleO node has it: 200 deployments
// of 100 KB each (their configs), each with its signal record. The
// daemon reads it after every pass when metrics-file is set: the Reader
// parses a state file once, Dir.Deployments every time.
func benchDir(b *testing.B) string {
	dir := b.TempDir()
	config := strings.Repeat("x", 100<<10)
	for i := range 200 {
		id := fmt.Sprintf("%08d-0000-0000-0000-000000000000", i)
		doc := fmt.Sprintf(`{"id": %q, "name": "deployment-%d", "group": "script", "config": %q, "inputs": []}`, id, i, config)
		os.WriteFile(filepath.Join(dir, id+".json"), []byte(doc), 0o600)
		agentstate.Write(Dir(dir).Signal(id), agentstate.Signal{Version: 1, StatusCode: "0", Transport: "CFN_SIGNAL", Result: "sent"})
	}
	return dir
}

func BenchmarkDeployments(b *testing.B) {
	dir := benchDir(b)
	b.Run("every-file", func(b *testing.B) {
		for b.Loop() {
			if _, err := Dir(dir).Deployments(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reader", func(b *testing.B) {
		var r Reader
		for b.Loop() {
			if _, err := r.Read(Dir(dir)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
