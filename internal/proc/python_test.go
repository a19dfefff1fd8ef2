package proc

import (
	"syscall"
	"testing"
)

// Python 3.11's CalledProcessError wording for a child killed by a signal.
func TestDiedWithAsPython(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{
		syscall.SIGKILL: "died with <Signals.SIGKILL: 9>",
		syscall.SIGTERM: "died with <Signals.SIGTERM: 15>",
		6:               "died with <Signals.SIGABRT: 6>",
		35:              "died with unknown signal 35",
	} {
		if got := DiedWith(sig); got != want {
			t.Errorf("DiedWith(%d) = %q, want %q", int(sig), got, want)
		}
	}
}
