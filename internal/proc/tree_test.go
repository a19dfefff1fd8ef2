package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestDescendants(t *testing.T) {
	t.Parallel()
	// bash with job control puts the inner sh in a group of its own.
	p, out := startPiped(t, Spec{Path: "bash", Args: []string{"bash", "-c", `set -m; sh -c 'sleep 100 & echo $!; wait' & wait`}})
	deep := readPid(t, out)
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _ = p.Wait(ctx)
		waitGone(t, deep)
	}()
	if got := descendants(os.Getpid()); !slices.Contains(got, p.Pid()) {
		t.Errorf("descendants of the test %v lack the child %d", got, p.Pid())
	}
	got := descendants(p.Pid())
	if len(got) != 2 || got[1] != deep {
		t.Errorf("descendants of the child: %v, want [inner sh, %d]", got, deep)
	}
	if len(descendants(deep)) != 0 {
		t.Errorf("sleep has descendants: %v", descendants(deep))
	}
}

// Stopping reaches descendants in other process groups and sessions.
func TestStopKillsOtherGroups(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		stopped syscall.Signal
	}{
		{"setsid", []string{"sh", "-c", "setsid sleep 100 & echo $!; wait"}, syscall.SIGTERM},
		{"job control", []string{"bash", "-c", "set -m; sleep 100 & echo $!; wait"}, syscall.SIGTERM},
		{"nested", []string{"bash", "-c", `set -m; sh -c 'sleep 100 & echo $!; wait' & wait`}, syscall.SIGTERM},
		// All ignore TERM: the SIGKILL round lists the descendants again.
		{"setsid, TERM ignored", []string{"sh", "-c", "trap '' TERM; setsid sleep 100 & echo $!; wait"}, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Path: tt.args[0], Args: tt.args, Grace: 200 * time.Millisecond}
			p, out := startPiped(t, spec)
			pid := readPid(t, out)
			killLater(t, pid)
			// $! is known before setsid(1) has called setsid(2).
			pg, err := unix.Getpgid(pid)
			for end := time.Now().Add(5 * time.Second); err == nil && pg == p.Pid() && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
				pg, err = unix.Getpgid(pid)
			}
			if err != nil || pg == p.Pid() {
				t.Fatalf("descendant %d is in group %d (%v), want another than %d", pid, pg, err, p.Pid())
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			res, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != tt.stopped {
				t.Errorf("Stopped %v, want %v", res.Stopped, tt.stopped)
			}
			waitGone(t, pid)
		})
	}
}

// A process left in the child's group, that outlived the stopped leader,
// goes too.
func TestStopKillsGroupLeftover(t *testing.T) {
	t.Parallel()
	// The leftover says its pid once it ignores TERM; the leader does not.
	spec := sh(`sh -c 'trap "" TERM; echo $$; exec sleep 100' & sleep 100`)
	spec.Grace = 300 * time.Millisecond
	p, out := startPiped(t, spec)
	pid := readPid(t, out)
	killLater(t, pid)
	if pg, err := unix.Getpgid(pid); err != nil || pg != p.Pid() {
		t.Fatalf("leftover %d is in group %d (%v), want %d", pid, pg, err, p.Pid())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != syscall.SIGTERM || res.Signal != syscall.SIGTERM {
		t.Errorf("Stopped %v Signal %v, want SIGTERM for both", res.Stopped, res.Signal)
	}
	waitGone(t, pid)
}

// A member of the group that handles SIGTERM has the grace to finish after
// the leader died of it (a script's trap writing its last words), and Wait
// returns as soon as the group is empty, not at the end of the grace.
func TestStopGivesTheGroupItsGrace(t *testing.T) {
	t.Parallel()
	words := filepath.Join(t.TempDir(), "words")
	spec := sh(`sh -c 'trap "sleep 0.2; echo bye > ` + words + `; exit 143" TERM; sleep 100 & echo $!; wait' & sleep 100`)
	spec.Grace = 5 * time.Second
	p, out := startPiped(t, spec)
	// Stop once the trapping shell's child runs sleep: signalled while it
	// still ran the shell's code, it could miss the signal (the shell's
	// handler, not yet reset, takes it) and outlive the grace, rightly.
	sleeper := readPid(t, out)
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", sleeper)); string(comm) == "sleep\n" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the trapping shell's child never ran sleep")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(words); err != nil || string(b) != "bye\n" {
		t.Fatalf("the trap did not finish: %q, %v", b, err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Wait took %v: it waited out the grace of an empty group", took)
	}
}
