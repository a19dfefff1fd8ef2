// Package deployed owns heat-config's state directory
// (/var/lib/heat-config/deployed): where it is, the names of its files,
// how each is written and read, the in-flight marker, the lock two runs
// take on it, and the sweep of what killed writers staged. 55-heat-config,
// heat-config-rebuild-deployed, tripleo-agent-status and
// os-collect-config's metrics all go through it.
//
// A deployment <id> has, in the directory:
//   - <id>.json, its state file: the deployment as heat-config ran it,
//     written before its hook starts; its existence alone means "do not
//     run it again", so an empty one (heat-config-rebuild-deployed's)
//     counts as deployed;
//   - <id>.inflight, empty, while its run is unfinished;
//   - <id>.notify.json, the signal data given to heat-config-notify;
//   - <id>.signal.json, the record of its signal for status.
package deployed

import (
	"os"
	"path/filepath"

	"github.com/tripleo-go/agent/internal/environ"
)

// The directory, the legacy one (on tmpfs before 2016, migrated by
// 55-heat-config), and the variables that override them.
const (
	DefaultDir = "/var/lib/heat-config/deployed"
	LegacyDir  = "/var/run/heat-config/deployed"
	DirVar     = "HEAT_CONFIG_DEPLOYED"
	LegacyVar  = "HEAT_CONFIG_DEPLOYED_OLD"
)

// The suffixes of a deployment's files after its id.
const (
	StateSuffix    = ".json"
	InflightSuffix = ".inflight"
	NotifySuffix   = ".notify.json"
	SignalSuffix   = ".signal.json"
)

// Dir is a state directory.
type Dir string

// FromEnv is the state directory env names (DirVar), else root +
// DefaultDir. root prefixes the built-in path in tests; "" in production.
func FromEnv(env []string, root string) Dir { return setting(env, DirVar, root+DefaultDir) }

// LegacyFromEnv is the legacy directory env names (LegacyVar), else
// root + LegacyDir.
func LegacyFromEnv(env []string, root string) Dir {
	return setting(env, LegacyVar, root+LegacyDir)
}

// Existing is the directory heat-config will use: DirVar, else the
// current one if it exists, else the legacy one, which 55-heat-config
// migrates on its next run.
func Existing(env []string, root string) Dir {
	if d, ok := environ.Lookup(env, DirVar); ok && d != "" {
		return Dir(d)
	}
	if _, err := os.Stat(root + DefaultDir); err == nil {
		return Dir(root + DefaultDir)
	}
	return Dir(root + LegacyDir)
}

func setting(env []string, name, def string) Dir {
	if d, ok := environ.Lookup(env, name); ok && d != "" {
		return Dir(d)
	}
	return Dir(def)
}

// String is the directory's path.
func (d Dir) String() string { return string(d) }

// State is the path of id's state file.
func (d Dir) State(id string) string { return d.file(id + StateSuffix) }

// Inflight is the path of id's in-flight marker.
func (d Dir) Inflight(id string) string { return d.file(id + InflightSuffix) }

// Notify is the path of id's signal data.
func (d Dir) Notify(id string) string { return d.file(id + NotifySuffix) }

// Signal is the path of id's signal record.
func (d Dir) Signal(id string) string { return d.file(id + SignalSuffix) }

func (d Dir) file(name string) string { return filepath.Join(string(d), name) }

// Deployed tells whether id has a state file: it ran, or was marked as
// run, and is not run again.
func (d Dir) Deployed(id string) bool { return exists(d.State(id)) }

// Interrupted tells whether id's run did not finish: its marker is there.
func (d Dir) Interrupted(id string) bool { return exists(d.Inflight(id)) }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
