// Command fleetsim measures what a fleet of os-collect-config daemons
// costs the metadata service, beyond what the real services on this
// machine can carry: N of our daemons in this process (test/fleet)
// against a loopback model of the metadata endpoint in a process of its
// own (test/fleet/model), and Debian's reference daemons the same way
// at a smaller N. make fleet runs it (the long mode); .ci/run a short
// one. The real services' side is test/e2e's TestFleet. docs/scale.md shows the figures.
//
//	fleetsim sim [-agents N] [-interval 30s] [-ref-agents N] [-out DIR] ...
//	fleetsim report -out DIR   (the tables and plots again, from DIR's results)
//	fleetsim model -doc-bytes N [-latency D]   (the model's process)
//	fleetsim listen -auth-url U -from I -to J  (the probes variant's sockets)
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetsim sim|report|model|listen [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "sim":
		err = simMain(ctx, os.Args[2:])
	case "model":
		err = modelMain(ctx, os.Args[2:])
	case "listen":
		err = listenMain(ctx, os.Args[2:])
	case "report":
		err = reportMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q: sim, report, model or listen", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetsim:", err)
		os.Exit(1)
	}
}

// profileCPU starts a CPU profile into path; stop ends and writes it.
func profileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
