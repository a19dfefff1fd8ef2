package writer

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"
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

var stagePattern = regexp.MustCompile(`^\.os-apply-config-([0-9]+)-[a-z0-9_]{8}\.tmp$`)

func stageName(pid int) string {
	return stagePrefix + strconv.Itoa(pid) + "-" + randomSuffix() + ".tmp"
}

// sweepLeftovers removes dead writers' staged files from every directory
// of the plan: a run killed part way left them, and this run is the one
// that completes its work. A staged file was never renamed, so its target
// still differs and this run writes: a run with nothing to write (most
// runs of a node's life) skips the sweep and its directory reads.
func sweepLeftovers(plan []planned, log *slog.Logger) {
	writes := false
	for i := range plan {
		writes = writes || plan[i].act == actWrite || plan[i].act == actDelete
	}
	if !writes {
		return
	}
	seen := map[string]bool{}
	for i := range plan {
		dir := filepath.Dir(plan[i].Path)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		for _, path := range removeLeftovers(dir) {
			log.Info("removed " + path + ", staged by a run that did not finish")
		}
	}
}

// removeLeftovers removes, from dir, the staged files of writers that are
// no longer running (killed, or the machine lost power). A PID reused by
// another process keeps its leftover until a later run: it is hidden.
func removeLeftovers(dir string) (removed []string) {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, name := range names {
		m := stagePattern.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || running(pid) {
			continue
		}
		path := filepath.Join(dir, name)
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if os.Remove(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}

// running tells whether a process with that PID exists (EPERM: it does,
// owned by someone else).
func running(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
