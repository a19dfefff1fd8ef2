package applyconfig

import (
	"context"
	"os"
	"runtime/debug"
)

// RunProcess runs os-apply-config as this process (ProcessEnv) under a
// soft memory limit: its live data is small next to the garbage of
// parsing metadata and templates, and the heap would otherwise grow past
// the 20 MiB peak RSS budget (make bench: 19.5-21.6 MiB with GOGC=50,
// 17.6-18.7 MiB with the limit, in the same time). The limit is soft:
// bigger metadata only makes the collector work harder (its CPU is capped
// by the runtime). GOGC or GOMEMLIMIT in the environment win.
func RunProcess(ctx context.Context, args []string) error {
	limitMemory(os.Getenv)
	return Run(ctx, args, ProcessEnv())
}

func limitMemory(getenv func(string) string) {
	if getenv("GOGC") == "" && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// MemoryLimit is Go-managed memory only; the binary's mapped pages come
// on top in RSS: about 9 MiB after the package inits of the whole agent
// (cmd/tripleo-agent), 6.5 MiB at the end of a run once it has let go of
// them. In the oacbench corpus: 15 MiB made 15-17 collections a run, 16
// MiB makes 9 at a peak RSS of 18.2-18.8 MiB (17 MiB: 7-8, but up to
// 19.9 MiB on a loaded machine, too close to the 20 MiB budget).
const MemoryLimit = 16 << 20
