package applyconfig

import (
	"math"
	"runtime/debug"
	"testing"
)

// os-apply-config runs under a soft memory limit unless the operator tuned
// the collector through the environment.
func TestMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, MemoryLimit},
		{map[string]string{"GOGC": "200"}, math.MaxInt64},
		{map[string]string{"GOMEMLIMIT": "64MiB"}, math.MaxInt64},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		limitMemory(func(k string) string { return tc.env[k] })
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("env %v: memory limit %d, want %d", tc.env, got, tc.want)
		}
	}
}
