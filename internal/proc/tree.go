package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// killTree signals the process group led by pid, then every descendant of
// pid found in /proc (a child may start process groups of its own). The
// descendants are listed first, while pid is still their parent. The
// group goes first and in one call: signalling a child before its shell
// would let the shell, woken by the child's death, run its next command.
func killTree(pid int, sig syscall.Signal) {
	stray := descendants(pid)
	_ = syscall.Kill(-pid, sig)
	for _, p := range stray {
		_ = syscall.Kill(p, sig)
	}
}

// descendants lists the processes below pid, parents before children,
// from the parent links in /proc/*/stat.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// The process may be gone already: skip it.
		if ppid, ok := parent(p); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parent reads the parent pid of pid from /proc/pid/stat.
func parent(pid int) (int, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name is in parentheses and may hold spaces or ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
