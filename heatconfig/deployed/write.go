package deployed

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/durable"
)

// Claim writes id's state file (doc) and, before it, its in-flight
// marker, both private and synced with the directory, so a deployment
// whose hook started is known after a crash or a power cut, and known as
// unfinished until Finish. It fails with fs.ErrExist, the marker left
// alone, when a concurrent run claimed id first; on another error
// nothing of id is left but what was there.
func (d Dir) Claim(id string, doc []byte) error {
	return d.ClaimFrom(id, func(w io.Writer) error {
		_, err := w.Write(doc)
		return err
	})
}

// ClaimFrom is Claim for a state file that write writes, never held
// whole here (a 100 MB deployment costs no copy of it).
func (d Dir) ClaimFrom(id string, write func(io.Writer) error) error {
	inflight := d.Inflight(id)
	os.Remove(inflight) // a run killed before it wrote the state file
	if err := createSynced(inflight, nil); err != nil {
		return &WriteError{Path: inflight, Err: err}
	}
	if err := createSyncedFrom(d.State(id), write); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			removeSynced(inflight)
		}
		return &WriteError{Path: d.State(id), Err: err}
	}
	return nil
}

// WriteError is a file of the directory that could not be written.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return "writing " + e.Path + ": " + e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Finish removes id's in-flight marker, durably: a power cut right after
// must not bring it back.
func (d Dir) Finish(id string) { removeSynced(d.Inflight(id)) }

// ReplaceState puts doc in id's state file whole (a reader sees the old
// or the new bytes), synced with the directory: a run killed while it
// wrote the state file left it empty or cut.
func (d Dir) ReplaceState(id string, doc []byte) error {
	if err := durable.WriteFile(d.State(id), doc); err != nil {
		return err
	}
	return syncDir(string(d))
}

// Touch creates id's state file empty, leaving an existing one alone:
// heat-config only looks at its existence (heat-config-rebuild-deployed).
func (d Dir) Touch(id string) error {
	f, err := os.OpenFile(d.State(id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// WriteNotify keeps the signal data, which a run cut short reads back.
// The reference does not truncate it, which leaves old bytes past the end
// of a shorter new text after a forced re-run; it is replaced whole,
// synced: the directory's next sync makes its name durable.
func (d Dir) WriteNotify(id string, data []byte) error {
	return durable.WriteFile(d.Notify(id), data)
}

// ReadNotify reads the signal data back.
func (d Dir) ReadNotify(id string) ([]byte, error) { return os.ReadFile(d.Notify(id)) }

// WriteSignal stores id's signal record, for tripleo-agent status.
func (d Dir) WriteSignal(id string, rec agentstate.Signal) error {
	return agentstate.Write(d.Signal(id), rec)
}

// createSynced creates path (0600: deployments carry credentials) with
// data, failing with fs.ErrExist if it is there: a second run must not
// take a deployment the first one claimed. The file appears whole
// (staged, synced, then linked: tools/torture found an empty state file
// after a kill between an exclusive create and its write), and the
// directory is synced.
func createSynced(path string, data []byte) error {
	if err := durable.CreateFile(path, data); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func createSyncedFrom(path string, write func(io.Writer) error) error {
	if err := durable.CreateFileFrom(path, write); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func removeSynced(path string) {
	if err := os.Remove(path); err == nil {
		_ = syncDir(filepath.Dir(path))
	}
}

// syncDir makes a directory's entries durable; a variable so that tests
// can see which directories are synced.
var syncDir = func(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// mkdirAllDurable is os.MkdirAll whose new directories survive a power
// cut: each one's name is made durable in its parent. Without it the
// state directory made by a node's first run, with every state file
// synced inside it, could vanish whole in a cut, and every deployment run
// again.
func mkdirAllDurable(dir string, perm os.FileMode) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirAllDurable(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	return syncDir(parent)
}
