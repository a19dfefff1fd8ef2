package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/test/fleet"
)

// referenceRuns reads what the reference agents' command noted: "TIME
// \"version\": N" per run.
func referenceRuns(dir string, n int) []fleet.Run {
	var out []fleet.Run
	for i := 0; i < n; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("agent-%05d", i), "runs"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var ts float64
			var v int
			if _, err := fmt.Sscanf(line, "%f \"version\": %d", &ts, &v); err == nil {
				sec, frac := math.Modf(ts)
				out = append(out, fleet.Run{Agent: i, At: time.Unix(int64(sec), int64(frac*1e9)), Version: v})
			}
		}
	}
	return out
}
