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
	eachProcess(func(p int, st procStat) {
		children[st.ppid] = append(children[st.ppid], p)
	})
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

// groupLive tells whether process group pgid has a member that is not a
// zombie (a dead member waits for whoever adopted it to reap it, which
// some inits do slowly).
func groupLive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	live := false
	eachProcess(func(_ int, st procStat) {
		live = live || st.pgrp == pgid && st.state != 'Z' && st.state != 'X'
	})
	return live
}

// procStat is what the tree needs of /proc/PID/stat.
type procStat struct {
	state      byte
	ppid, pgrp int
}

// eachProcess calls f for every process in /proc; one that is gone by the
// time it is read is skipped.
func eachProcess(f func(pid int, st procStat)) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(p); ok {
			f(p, st)
		}
	}
}

// readStat reads /proc/pid/stat: "pid (comm) state ppid pgrp ...".
func readStat(pid int) (procStat, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold spaces or ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp}, err1 == nil && err2 == nil
}
