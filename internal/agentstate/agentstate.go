// Package agentstate is the small record each program leaves for
// tripleo-agent-status: os-collect-config's last pass (each
// collector's result, the command's), and heat-config's signal of each
// deployment. The JSON field names are a stable, documented schema
// (docs/status.md): add fields, never rename or remove one.
package agentstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/tripleo-go/agent/internal/durable"
)

// SchemaVersion is bumped only for an incompatible change.
const SchemaVersion = 1

// PassFile is os-collect-config's record, in its status directory.
const PassFile = "status.json"

// DefaultDir is the status directory: under /run, so that after a boot
// `status --wait` waits for this boot's first pass. Not
// /run/os-collect-config: that is the default backup-cachedir
// (/var/run/os-collect-config), which each pass replaces whole. DirVar
// overrides it.
const (
	DefaultDir = "/run/tripleo-agent"
	DirVar     = "OS_COLLECT_CONFIG_STATUS_DIR"
)

// Pass is os-collect-config's last pass.
type Pass struct {
	Version    int         `json:"version"`
	Started    time.Time   `json:"started"`
	Ended      time.Time   `json:"ended"`
	Collectors []Collector `json:"collectors"`
	// Command is nil when the pass had nothing new to apply.
	Command *Command `json:"command,omitempty"`
	// Converged: the pass ended with the node applying what it collected
	// (the command succeeded, or there was nothing new).
	Converged bool `json:"converged"`
	// Stopped is set when os-collect-config stopped after this pass
	// without running another: its configuration was refused at
	// start-up. The fields above are then the last pass's (zero times and
	// no collectors when none ended before). The next pass's record,
	// which has no Stopped, replaces it.
	Stopped *Stop `json:"stopped,omitempty"`
}

// HasPass reports whether the record holds a pass (a record written on a
// stop before any pass has none).
func (p *Pass) HasPass() bool { return !p.Ended.IsZero() }

// Stop is why os-collect-config exited before it could run a pass.
type Stop struct {
	At time.Time `json:"at"`
	// Cause is "configuration": a value, a file or a collector name
	// refused (a later agent may add causes).
	Cause string `json:"cause"`
	// Error is the error line it logged, the refused value in it
	// (never a secret's, nor a URL's query).
	Error string `json:"error"`
	// Exit is its exit status.
	Exit int `json:"exit"`
}

// Collector is one collector's result in a pass.
type Collector struct {
	Name string `json:"name"`
	// Result is "ok", "degraded" (it answered, but some of its files
	// could not be used: their keys kept their last committed data, or
	// were left out when they had none), "unavailable" or
	// "not-configured".
	Result string `json:"result"`
	// Reason says why it was unavailable or degraded, naming the files
	// (no credentials in it).
	Reason  string    `json:"reason,omitempty"`
	Changed bool      `json:"changed"`
	Polled  time.Time `json:"polled"`
}

// Command is the command a pass ran.
type Command struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	// Exit is its exit status (-n for signal n, Python's returncode).
	Exit int `json:"exit"`
}

// Signal is heat-config's record of one deployment's signal, beside its
// state file (<id>.signal.json).
type Signal struct {
	Version int       `json:"version"`
	At      time.Time `json:"at"`
	// StatusCode is the deploy_status_code sent ("0" for success).
	StatusCode string `json:"status_code"`
	// Transport is deploy_signal_transport (NO_SIGNAL, CFN_SIGNAL, ...).
	Transport string `json:"transport"`
	// Result is SignalSent or SignalFailed (heat-config-notify failed:
	// NotifyExit).
	Result     string `json:"result"`
	NotifyExit int    `json:"notify_exit"`
}

// Signal.Result's values.
const (
	SignalSent   = "sent"
	SignalFailed = "failed"
)

// Write stores v as JSON in path atomically (a reader sees the old or
// the new record, never half of one), private to root. The record is
// synced before its name: once a later sync of the directory makes the
// name durable (heat-config syncs its state directory), the bytes are
// there too, not an empty record after a power cut.
func Write(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(path, append(data, '\n'))
}

// RemoveStaged removes what Write staged for path and never renamed (its
// writer was killed) and returns how many: older than a minute, for a
// Write takes far less, so a concurrent writer's file is left alone.
func RemoveStaged(path string) int {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, _ := os.ReadDir(dir)
	removed := 0
	for _, e := range entries {
		if target, ok := durable.StagedFor(e.Name()); !ok || target != base || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute && os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// Read loads a record written by Write.
func Read(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// WriteStop adds stop to os-collect-config's record in dir, keeping the
// last pass's fields: what the node last did stays in view beside why
// the agent stopped. An unreadable record is replaced.
func WriteStop(dir string, stop Stop) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, PassFile)
	var rec Pass
	if Read(path, &rec) != nil {
		rec = Pass{}
	}
	rec.Version, rec.Stopped = SchemaVersion, &stop
	RemoveStaged(path) // a killed writer's
	return Write(path, rec)
}
