package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tripleo-go/agent/internal/testkit/procstat"
	"github.com/tripleo-go/agent/test/fleet/model"
	"github.com/tripleo-go/agent/test/fleet/zaqarmodel"
)

// modelMain is the model's process: it serves the document and the
// control API on 127.0.0.1, prints both URLs on one line, and stops when
// its stdin closes (its parent is gone) or on SIGTERM.
func modelMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("model", flag.ContinueOnError)
	docBytes := fs.Int("doc-bytes", 8192, "the document's size")
	latency := fs.Duration("latency", 0, "added to every answer")
	bucket := fs.Duration("bucket", time.Second, "the timelines' resolution")
	queues := fs.Int("zaqar-queues", 0, "model Keystone and Zaqar with this many queues, not a TempURL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raiseFileLimit(3**queues + 1024)
	ctx, cancel := untilStdinCloses(ctx)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var e interface {
		model.Model
		Serve(context.Context, net.Listener) error
	}
	url := fmt.Sprintf("http://%s/v1/AUTH_fleet/metadata/server.json", ln.Addr())
	if *queues > 0 {
		e = zaqarmodel.New(zaqarmodel.Options{Queues: *queues, DocBytes: *docBytes, Latency: *latency, Bucket: *bucket}, time.Now())
		url = zaqarmodel.AuthURL("http://" + ln.Addr().String())
	} else {
		e = model.New(model.Options{DocBytes: *docBytes, Latency: *latency, Bucket: *bucket}, time.Now())
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctl := &http.Server{Handler: model.Control(e)}
	go ctl.Serve(cl)
	defer ctl.Close()
	fmt.Printf("%s http://%s\n", url, cl.Addr())
	return e.Serve(ctx, ln)
}

// modelProc is a running model process.
type modelProc struct {
	cmd     *exec.Cmd
	URL     string // the document, or Keystone's v3 URL (Zaqar)
	Control model.Remote
}

// startModel starts a TempURL model, or with queues > 0 a Zaqar model.
func startModel(docBytes int, latency, bucket time.Duration, queues int) (*modelProc, error) {
	cmd, _, out, err := startSelf(nil, "model", "-doc-bytes", fmt.Sprint(docBytes), "-latency", latency.String(),
		"-bucket", bucket.String(), "-zaqar-queues", fmt.Sprint(queues))
	if err != nil {
		return nil, err
	}
	// Its stdin closes when this process exits: the model stops.
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("the model did not start: %q %v", line, err)
	}
	return &modelProc{cmd: cmd, URL: f[0], Control: model.Remote{URL: f[1]}}, nil
}

// cpuSeconds is the model process's CPU time so far.
func (m *modelProc) cpuSeconds() float64 { return procstat.CPU(m.cmd.Process.Pid) }

func (m *modelProc) stop() {
	m.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
}

// untilStdinCloses is ctx for a process startSelf started: it ends when
// the lifeline, its stdin, closes (the parent is done or gone).
func untilStdinCloses(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	return ctx, cancel
}

// startSelf starts this program in another mode (after the command
// prefix, if any): its stderr is this process's, its stdin the lifeline
// (the child stops when it closes), its stdout returned to be read.
func startSelf(prefix []string, mode string, args ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	argv := slices.Concat(prefix, []string{self, mode}, args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, out, nil
}
