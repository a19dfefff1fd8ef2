package writer

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tripleo-go/agent/internal/pypath"
)

// Staged files live beside their targets until the renames, and a killed
// run leaves them there. Their names are ones that the readers of whole
// directories skip: a leading dot (hidden; systemd's and most *.d
// readers), a dot inside (cron, run-parts and sudoers.d skip any name
// with one), and a ".tmp" end (not *.conf, *.sh, *.json). The reference's
// "tmpXXXXXXXX" is live configuration in /etc/cron.d or /etc/sudoers.d.
// The writer's PID in the name lets the next run tell its own leftovers
// from a running writer's files.
const stagePrefix = ".os-apply-config-"

// stagePattern is compiled when first needed: most runs write nothing,
// and every program of the multi-call binary would pay for it at start.
var stagePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\.os-apply-config-([0-9]+)-[a-z0-9_]{8}\.tmp$`)
})

func stageName(pid int) string {
	return stagePrefix + strconv.Itoa(pid) + "-" + randomSuffix() + ".tmp"
}

// staged creates, with create, a new entry under a staged name in dir,
// trying other names while one is taken, and returns its path.
func staged(dir string, pid int, create func(path string) error) (string, error) {
	for try := 0; ; try++ {
		path := filepath.Join(dir, stageName(pid))
		err := create(path)
		if err == nil {
			return path, nil
		}
		if err != unix.EEXIST || try > 100 {
			return "", err
		}
	}
}

// sweepRest removes dead writers' staged files from every directory of
// the plan that this run did not make and did not sweep while staging,
// once a sweep while staging found some: a run killed part way left
// them, and this run is the one that completes its work. A staged file
// was never renamed, so its target still differs and this run writes it,
// sweeping its directory first: a run that finds nothing there (most
// runs of a node's life, which write a few files or none) reads no other
// directory; a steady render read some 300, 5% of its time. What was
// removed is logged, directory by directory in the order of the files.
func (b *Batch) sweepRest(log *slog.Logger) {
	seen := map[string]bool{}
	var dirs []*dirState
	for i := range b.plan {
		dir := filepath.Dir(b.plan[i].Path)
		if t := b.plan[i].tree; t != nil {
			dir = filepath.Dir(t.top.path) // swept before the tree was made
		}
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, b.dirs.state(dir))
		}
	}
	if b.dirs.found.Load() {
		// A directory read is a few system calls, and the tree has some
		// 300 directories: in parallel.
		forEach(len(dirs), func(i int) error {
			b.dirs.sweep(dirs[i])
			return nil
		})
	}
	for _, d := range dirs {
		for _, path := range d.removed {
			log.Info("removed " + path + ", staged by a run that did not finish")
		}
	}
}

// removeLeftovers removes, from dir, the staged files and trees of writers
// that are no longer running (killed, or the machine lost power). After a power
// cut the PIDs start again from 1, so a staged file's PID is often alive
// again, another process's or this one's: see deadWriter.
func removeLeftovers(dir string) (removed []string) {
	entries, err := pypath.ScanDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name
		if !strings.HasPrefix(name, stagePrefix) {
			continue
		}
		m := stagePattern().FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil || !deadWriter(pid, time.Unix(st.Mtim.Unix())) {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			err = os.Remove(path)
		case unix.S_IFDIR: // a new tree, never placed
			err = os.RemoveAll(path)
		default:
			continue
		}
		if err == nil {
			removed = append(removed, path)
		}
	}
	return removed
}

// deadWriter tells whether the writer that staged a file last written at
// mtime is gone: no process has its PID; or the PID is this process's,
// which sweeps before it stages anything; or the process with that PID
// is a thread, or runs another program; or it started after the file
// was written (the PID came back after a reboot). tools/torture found the
// second and third cases: after a kill or a power cut in a PID
// namespace, the next os-apply-config, or one of its own threads, got
// the dead writer's PID within milliseconds, too soon for ages to tell.
func deadWriter(pid int, mtime time.Time) bool {
	if pid == os.Getpid() {
		return true
	}
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return true
	}
	if !mayStage(pid) {
		return true
	}
	age, ok := processAge(pid)
	// Ages, not dates: the start time in /proc counts from the boot, and
	// the boot's date is known to a second only. The margin covers clock
	// ticks.
	return ok && age < time.Since(mtime)-100*time.Millisecond
}

// mayStage tells whether the running task pid could be a writer: it is
// a process, not a thread of one (kill and /proc answer for thread ids
// too, and a writer's name holds its process id), and its command name
// is os-apply-config's, the multi-call binary's, or this process's own.
// What cannot be read could be anything.
func mayStage(pid int) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	var name, tgid string
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Name:"); ok {
			name = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			tgid = strings.TrimSpace(v)
		}
	}
	if tgid != "" && tgid != strconv.Itoa(pid) {
		return false
	}
	own, _ := os.ReadFile("/proc/self/comm")
	return name == "os-apply-config" || name == "tripleo-agent" || name == strings.TrimSuffix(string(own), "\n")
}

// processAge is how long ago a running process started, from /proc.
func processAge(pid int) (time.Duration, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from its closing parenthesis; starttime is field 22, in clock
	// ticks since the boot.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return 0, false
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	var now unix.Timespec
	if err != nil || unix.ClockGettime(unix.CLOCK_BOOTTIME, &now) != nil {
		return 0, false
	}
	const userHZ = 100 // sysconf(_SC_CLK_TCK) on Linux
	return time.Duration(now.Nano()) - time.Duration(ticks)*time.Second/userHZ, true
}
