// Package fleet runs many os-collect-config daemons in one process: each
// is the project's own daemon (collectors/occ: its configuration, its
// collectors, its cache and lock, its loop with splay, ramp, jitter and
// retries), in a directory of its own, with a simulated command that
// notes which metadata version it was given and when.
package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tripleo-go/agent/collectors/occ"
	"github.com/tripleo-go/agent/internal/exitcode"
	"github.com/tripleo-go/agent/test/fleet/model"
)

// Options say what fleet to run.
type Options struct {
	// N agents, in Dir/agent-NNNNN (a tmpfs: what the agents write
	// costs no disk).
	N   int
	Dir string
	// Conf is the os-collect-config.conf of agent i, whose directory is
	// dir (cachedir and the rest belong there).
	Conf func(i int, dir string) string
	// ConfigFiles are read before the agent's own (a stack's
	// os-collect-config.conf).
	ConfigFiles []string
	// Stagger spreads the agents' starts at random over this long; zero
	// starts them all at the same instant (a rack powering on).
	Stagger time.Duration
	// CommandTime is how long the simulated command takes.
	CommandTime time.Duration
}

// Run is one run of an agent's command.
type Run struct {
	Agent int
	At    time.Time
	// Version is the model document's version in the files (-1: none).
	Version int
}

// Fleet is a running fleet.
type Fleet struct {
	// Started is when the agents were let go (the first of them, when
	// staggered).
	Started time.Time

	opts   Options
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	runs   []Run
	exits  []error
	stderr logTail
}

// Start writes every agent's configuration and starts them.
func Start(ctx context.Context, o Options) (*Fleet, error) {
	f := &Fleet{opts: o}
	confs := make([]string, o.N)
	for i := range confs {
		dir := filepath.Join(o.Dir, fmt.Sprintf("agent-%05d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		confs[i] = filepath.Join(dir, "os-collect-config.conf")
		if err := os.WriteFile(confs[i], []byte(o.Conf(i, dir)), 0o600); err != nil {
			return nil, err
		}
	}
	ctx, f.cancel = context.WithCancel(ctx)
	gate := make(chan struct{})
	for i := range confs {
		f.wg.Add(1)
		go f.agent(ctx, gate, i, confs[i])
	}
	f.Started = time.Now()
	close(gate)
	return f, nil
}

func (f *Fleet) agent(ctx context.Context, gate <-chan struct{}, i int, conf string) {
	defer f.wg.Done()
	<-gate
	if f.opts.Stagger > 0 {
		select {
		case <-time.After(rand.N(f.opts.Stagger)):
		case <-ctx.Done():
			return
		}
	}
	dir := filepath.Dir(conf)
	env := occ.Env{
		Stdout: io.Discard, Stderr: &f.stderr, Root: dir, StatusDir: filepath.Join(dir, "status"),
		Environ:    []string{"PATH=/usr/bin:/bin", "HOME=" + dir},
		RunCommand: func(ctx context.Context, files []string) int { return f.command(ctx, i, files) },
	}
	var args []string
	for _, c := range append(f.opts.ConfigFiles, conf) {
		args = append(args, "--config-file", c)
	}
	err := occ.Run(ctx, args, env)
	if exitcode.Of(err) == exitcode.Terminated && ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	f.exits = append(f.exits, fmt.Errorf("agent %d exited: %v", i, err))
	f.mu.Unlock()
}

// command is the simulated command: it reads the version the files hold.
func (f *Fleet) command(ctx context.Context, i int, files []string) int {
	at := time.Now()
	v := -1
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			if v = model.Version(b); v >= 0 {
				break
			}
		}
	}
	f.mu.Lock()
	f.runs = append(f.runs, Run{Agent: i, At: at, Version: v})
	f.mu.Unlock()
	if f.opts.CommandTime > 0 {
		select {
		case <-time.After(f.opts.CommandTime):
		case <-ctx.Done():
			return 143
		}
	}
	return 0
}

// Runs is every command run so far.
func (f *Fleet) Runs() []Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Run(nil), f.runs...)
}

// Stop stops every agent and waits for them. The error names agents
// that had stopped by themselves.
func (f *Fleet) Stop() error {
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.exits...)
}

// Logged is how many lines the agents wrote to stderr, and the last few.
func (f *Fleet) Logged() (int, []string) { return f.stderr.get() }

// logTail counts lines and keeps the last ones.
type logTail struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func (l *logTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		l.n++
		l.lines = append(l.lines, string(line))
		if len(l.lines) > 10 {
			l.lines = l.lines[1:]
		}
	}
	return len(p), nil
}

func (l *logTail) get() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, append([]string(nil), l.lines...)
}
