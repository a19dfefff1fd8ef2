// Package procstat reads processes' CPU time from /proc: a service's cost
// is the CPU time of its process and every descendant (workers).
package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ClockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on
// every Linux architecture Debian ships).
const ClockTicks = 100

// Stat is what one /proc/PID/stat line says that matters here.
type Stat struct {
	PID, PPID int
	State     string
	// CPU is user plus system time, in seconds.
	CPU float64
}

// ParseStat parses a /proc/PID/stat line (the command name may hold
// spaces and parentheses: the fields start after the last ')').
func ParseStat(line string) (Stat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("not a stat line: %.60q", line)
	}
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return Stat{}, fmt.Errorf("short stat line: %.60q", line)
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(line[:open]))
	ppid, err2 := strconv.Atoi(f[1])
	ut, err3 := strconv.ParseFloat(f[11], 64)
	st, err4 := strconv.ParseFloat(f[12], 64)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return Stat{}, fmt.Errorf("stat line %.60q: %w", line, err)
		}
	}
	return Stat{PID: pid, PPID: ppid, State: f[0], CPU: (ut + st) / ClockTicks}, nil
}

// All reads every process's stat (processes that exit meanwhile are
// skipped).
func All() []Stat {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []Stat
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if s, err := ParseStat(string(b)); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// TreeCPU is the CPU seconds of each root and all its descendants, from
// the stats of all processes.
func TreeCPU(all []Stat, roots ...int) float64 {
	children := map[int][]Stat{}
	byPID := map[int]Stat{}
	for _, s := range all {
		children[s.PPID] = append(children[s.PPID], s)
		byPID[s.PID] = s
	}
	seen := map[int]bool{}
	var sum float64
	var walk func(pid int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		sum += byPID[pid].CPU
		for _, c := range children[pid] {
			walk(c.PID)
		}
	}
	for _, r := range roots {
		if _, ok := byPID[r]; ok {
			walk(r)
		}
	}
	return sum
}

// CPU is the CPU seconds of pid and its descendants now.
func CPU(pid int) float64 { return TreeCPU(All(), pid) }
