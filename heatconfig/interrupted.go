package heatconfig

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/tripleo-go/agent/deployment"
	"github.com/tripleo-go/agent/internal/jsondoc"
)

// A deployment whose in-flight marker (see heatconfig/deployed) is there
// did not finish its run. The reference had none: a node killed or
// powered off while a hook ran never ran that deployment again and never
// signalled it, and the stack waited for its timeout.

// interruptedCode is the status code of a deployment whose run the agent
// did not see to its end.
const interruptedCode = 137

// signalInterrupted signals a deployment whose run was cut short, without
// running it again (at most once per id): with its result if the hook had
// finished (the signal data was written, the signal may not have gone),
// else as failed.
func (r *runner) signalInterrupted(ctx context.Context, log *slog.Logger, d *deployment.Deployment, statePath string) {
	defer r.config.deployed.Finish(d.ID())
	// A run killed while it wrote the state file left it empty or cut:
	// heat-config-notify reads the signal's address from it, and a later
	// run takes it for the deployment. It is this deployment's document.
	if b, err := os.ReadFile(statePath); err != nil || !bytes.Equal(b, []byte(d.Indented())) {
		if err := r.config.deployed.ReplaceState(d.ID(), []byte(d.Indented())); err != nil {
			log.Error(fmt.Sprintf("rewriting %s: %v", statePath, err))
		}
	}
	if b, err := r.config.deployed.ReadNotify(d.ID()); err == nil {
		if data, err := jsondoc.Loads(b); err == nil {
			log.Warn(fmt.Sprintf("Deployment %s finished but its run was cut short before its signal was sent: signalling its result", d.ID()))
			r.notify(ctx, log, d, statePath, data)
			return
		}
	}
	log.Warn(fmt.Sprintf("Deployment %s was interrupted (the agent was killed or the node went down while its hook ran): signalling it as failed, not running it again", d.ID()))
	res := hookResult{code: interruptedCode,
		stderr: []byte("heat-config: the run of this deployment was interrupted (the agent was killed or the node went down); it is not run again\n")}
	r.notify(ctx, log, d, statePath, res.signalData())
}
