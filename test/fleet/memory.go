package fleet

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Memory is this process's memory at one moment.
type Memory struct {
	// RSS is the resident set (VmRSS).
	RSS float64
	// Heap and Stacks are the Go runtime's, in use.
	Heap, Stacks float64
	Goroutines   int
}

// MemoryNow collects garbage first, so that what is measured is what the
// agents hold.
func MemoryNow() Memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Memory{RSS: rss(), Heap: float64(ms.HeapInuse), Stacks: float64(ms.StackInuse), Goroutines: runtime.NumGoroutine()}
}

// PerAgent is the growth from before to m, per agent.
func (m Memory) PerAgent(before Memory, n int) Memory {
	d := float64(max(n, 1))
	return Memory{RSS: (m.RSS - before.RSS) / d, Heap: (m.Heap - before.Heap) / d, Stacks: (m.Stacks - before.Stacks) / d,
		Goroutines: (m.Goroutines - before.Goroutines) / max(n, 1)}
}

func rss() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	return 0
}
