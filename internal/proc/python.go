package proc

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalNames are Python's signal.Signals members on Linux (aliases such
// as SIGIOT, SIGCLD and SIGPOLL resolve to the first name, as there).
var signalNames = map[syscall.Signal]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
	9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
	16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU",
	23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO",
	30: "SIGPWR", 31: "SIGSYS", 34: "SIGRTMIN", 64: "SIGRTMAX",
}

// DiedWith is how Python's CalledProcessError words a child killed by
// sig: "died with <Signals.SIGKILL: 9>" or "died with unknown signal 35".
func DiedWith(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return fmt.Sprintf("died with <Signals.%s: %d>", name, int(sig))
	}
	return fmt.Sprintf("died with unknown signal %d", int(sig))
}

// CloseInheritedFDs marks every descriptor above stderr close-on-exec, so
// children get only stdin, stdout and stderr, as the reference's children
// (Python's subprocess closes the others); a parent may have leaked some.
func CloseInheritedFDs() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
