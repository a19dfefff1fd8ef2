package writer

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/logging"
)

// A staged file is not live configuration in a directory that its reader
// takes whole, however the run ends: each reader's rule skips its name.
func TestStageNamesAreSkippedByDirectoryReaders(t *testing.T) {
	runParts := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) // Debian's run-parts, and so cron.daily & co.
	for range 100 {
		name := stageName(os.Getpid())
		readers := map[string]bool{
			"hidden (systemd, most *.d readers)":       !strings.HasPrefix(name, "."),
			"/etc/cron.d and sudoers.d: no dot inside": !strings.Contains(name[1:], "."),
			"run-parts":                              runParts.MatchString(name),
			"*.conf (modprobe.d, sysctl.d, systemd)": strings.HasSuffix(name, ".conf"),
			"*.json, *.yaml, *.sh":                   strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".sh"),
		}
		for reader, reads := range readers {
			if reads {
				t.Errorf("%s would read the staged file %q", reader, name)
			}
		}
		if !stagePattern().MatchString(name) {
			t.Errorf("%q is not recognised as a staged file", name)
		}
	}
}

// deadPID is the PID of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// runningWriter starts a process named as os-apply-config runs (a link
// to sleep), alive for the test: what a writer still staging looks like.
func runningWriter(t *testing.T) int {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	link := filepath.Join(t.TempDir(), "os-apply-config")
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Its name is the link's once it has exec'd.
	for range 100 {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm"); string(comm) == "os-apply-config\n" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd.Process.Pid
}

// otherThread is the id of one of this process's threads other than the
// main one (0 if there is none).
func otherThread(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tasks {
		if tid, _ := strconv.Atoi(e.Name()); tid != 0 && tid != os.Getpid() {
			return tid
		}
	}
	return 0
}

// The next run removes what a killed run staged (files and new trees), in
// every directory it writes into, and nothing else: not a running writer's files, not an
// operator's files that look alike.
func TestLeftoversOfDeadWritersAreRemoved(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	dead := deadPID(t)
	put := func(d, name string) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{put(dir, stageName(dead)), put(other, stageName(dead))}
	kept := []string{
		put(dir, stageName(runningWriter(t))), // a writer still running
		put(dir, ".os-apply-config-notes"),
		put(dir, "tmpabcdefgh"), // the reference's naming: may be anyone's
		put(dir, ".os-apply-config-"+strconv.Itoa(dead)+"-abcdefgh.tmp.bak"),
	}
	// New trees, staged whole: a dead writer's goes, files and all.
	deadTree, liveTree := filepath.Join(dir, stageName(dead)), filepath.Join(dir, stageName(runningWriter(t)))
	for _, tree := range []string{deadTree, liveTree} {
		if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		put(filepath.Join(tree, "sub"), "nova.conf")
	}
	gone = append(gone, deadTree)
	kept = append(kept, liveTree)

	if _, err := Apply([]File{file(filepath.Join(dir, "a.conf"), "a\n"), file(filepath.Join(other, "b.conf"), "b\n")}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s: a dead writer's staged file was left", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// After a power cut PIDs start again from 1: a staged file's PID may be
// this run's own, a thread's, a process that runs another program, or
// one that started after the file was written. All are leftovers; a
// live writer's file (written after it started) is not (tools/torture's
// kills and power cuts found the first three cases).
func TestLeftoversOfWritersBeforeAReboot(t *testing.T) {
	dir := t.TempDir()
	put := func(pid int, mtime time.Time) string {
		p := filepath.Join(dir, stageName(pid))
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	longAgo := time.Now().Add(-24 * 365 * time.Hour) // before this machine booted
	// A PID taken again a second after the file was written (in a PID
	// namespace, or a busy machine): the process is younger than the file.
	young := exec.Command("sleep", "30")
	if err := young.Start(); err != nil {
		t.Fatal(err)
	}
	defer young.Process.Kill()
	writer := runningWriter(t)
	gone := []string{put(os.Getpid(), time.Now()), put(os.Getppid(), longAgo), put(young.Process.Pid, time.Now().Add(-time.Second)),
		put(young.Process.Pid, time.Now())} // sleep is no writer, however young
	if tid := otherThread(t); tid != 0 {
		gone = append(gone, put(tid, time.Now())) // a thread id names no writer
	}
	kept := put(writer, time.Now())
	if _, err := Apply([]File{file(filepath.Join(dir, "a.conf"), "a\n")}, logging.Discard); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s: a leftover from before the reboot was kept", filepath.Base(p))
		}
	}
	if _, err := os.Lstat(kept); err != nil {
		t.Errorf("a running writer's staged file was removed: %v", err)
	}
}

// A directory is swept before a file is staged in it. The others of the
// run (of its unchanged files) are swept only once a sweep found a dead
// writer's files: a run killed part way left them where this run writes
// (their targets still differ), and a run that finds none there reads
// no other directory.
func TestLeftoversElsewhereAreSweptOnceOneIsFound(t *testing.T) {
	dir := t.TempDir()
	changed, same := filepath.Join(dir, "changed"), filepath.Join(dir, "same")
	for _, d := range []string{changed, same} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f.conf"), []byte("old\n"), 0o644)
	}
	dead := deadPID(t)
	leftover := func(d string) string {
		p := filepath.Join(d, stageName(dead))
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := func(body string) []File {
		return []File{file(filepath.Join(changed, "f.conf"), body), file(filepath.Join(same, "f.conf"), "old\n")}
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	elsewhere := leftover(same)
	if _, err := Apply(files("new 1\n"), logging.Discard); err != nil {
		t.Fatal(err)
	}
	if !exists(elsewhere) {
		t.Fatalf("%s: swept, though the directories written into held no leftover", elsewhere)
	}
	here := leftover(changed)
	var logged bytes.Buffer
	if _, err := Apply(files("new 2\n"), logging.New(&logged, logging.Options{Identifier: "t"})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{here, elsewhere} {
		if exists(p) {
			t.Errorf("%s: left, though a leftover was found", p)
		}
		if !strings.Contains(logged.String(), "removed "+p+", staged by a run that did not finish") {
			t.Errorf("removal of %s not logged:\n%s", p, logged.String())
		}
	}
}
