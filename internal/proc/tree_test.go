package proc

import (
	"context"
	"os"
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
	p, out := startPiped(t, sh(`sh -c 'trap "" TERM; echo $$; exec sleep 100' & sleep 100`))
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
