// Package mainrun is what each of the agent's binaries does around its
// program: a context that SIGTERM and SIGINT cancel, the exit status the
// program's error carries (internal/exitcode), and death by the signal
// that stopped it.
package mainrun

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/exitcode"
)

// Exit runs run with a context that SIGTERM and SIGINT cancel, and ends
// the process with the exit status of its error. A program stopped by one
// of them that says so (exitcode.Terminated) dies of the signal after
// cleaning up, as the Python programs did: systemd counts `systemctl
// stop` as a clean stop (an exit status of 143 is a failure to it), and
// shells still see 128+n.
func Exit(run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	var got atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-sigs:
			got.Store(sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	code := exitcode.Of(run(ctx))
	cancel()
	<-done
	if sig, ok := got.Load().(syscall.Signal); ok && code == exitcode.Terminated {
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal is delivered meanwhile
	}
	os.Exit(code)
}
