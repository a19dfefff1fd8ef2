package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tripleo-go/agent/test/fleet"
)

// listenMain is the listeners' process: it subscribes a socket to each
// of queues [from, to) and prints a line "queue unix-nanoseconds
// version" per push, until its stdin closes (its parent is done or
// gone).
func listenMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	authURL := fs.String("auth-url", "", "the model's Keystone v3 URL")
	from := fs.Int("from", 0, "the first queue")
	to := fs.Int("to", 0, "one past the last queue")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raiseFileLimit(3*(*to-*from) + 1024)
	ctx, cancel := untilStdinCloses(ctx)
	defer cancel()
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	l, err := startListeners(ctx, *authURL, *from, *to, func(r fleet.Run) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%d %d %d\n", r.Agent, r.At.UnixNano(), r.Version)
		out.Flush()
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	l.stop()
	return nil
}

// listenProc is the listeners' process, seen from the simulation.
type listenProc struct {
	cmd   *exec.Cmd
	stdin io.Closer
	read  chan struct{} // closed when its output ended
	once  sync.Once

	mu     sync.Mutex
	pushes []fleet.Run
}

// startListenProc starts the listeners' process for queues [from, to)
// at nice 10 (listeners.go says why), or at this process's priority
// where there is no nice(1).
func startListenProc(authURL string, from, to int) (*listenProc, error) {
	var nice []string
	if path, err := exec.LookPath("nice"); err == nil {
		nice = []string{path, "-n", "10"}
	}
	cmd, stdin, out, err := startSelf(nice, "listen", "-auth-url", authURL, "-from", strconv.Itoa(from), "-to", strconv.Itoa(to))
	if err != nil {
		return nil, err
	}
	p := &listenProc{cmd: cmd, stdin: stdin, read: make(chan struct{})}
	go p.collect(out)
	return p, nil
}

func (p *listenProc) collect(out io.Reader) {
	defer close(p.read)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parsePush(sc.Text()); ok {
			p.mu.Lock()
			p.pushes = append(p.pushes, r)
			p.mu.Unlock()
		}
	}
}

// parsePush reads a line of the listeners' process.
func parsePush(line string) (fleet.Run, bool) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return fleet.Run{}, false
	}
	agent, err1 := strconv.Atoi(f[0])
	ns, err2 := strconv.ParseInt(f[1], 10, 64)
	version, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return fleet.Run{}, false
	}
	return fleet.Run{Agent: agent, At: time.Unix(0, ns), Version: version}, true
}

// stop ends the process (its stdin closed; killed after 30 s) and
// returns the pushes it printed; it may be called again.
func (p *listenProc) stop() []fleet.Run {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.read:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.read
		}
		p.cmd.Wait()
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pushes
}
