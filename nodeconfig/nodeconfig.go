// Package nodeconfig is what the node's own configure steps share (the
// os-refresh-config scripts of the sysctl, network-gateway, hosts,
// os-net-config and hiera elements): the world a step runs in, the metadata as os-apply-config
// finds it, a file replaced whole, and a command run from PATH.
package nodeconfig

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tripleo-go/agent/applyconfig/metadata"
	"github.com/tripleo-go/agent/internal/durable"
	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/logging"
	"github.com/tripleo-go/agent/internal/proc"
)

// RootVar names the variable whose value prefixes every system path a
// step reads or writes (/etc/hosts, /etc/sysctl.d, ...): tests point it
// at a scratch tree. Unset in production.
const RootVar = "NODECONFIG_ROOT"

// Env is the world a step runs in.
type Env struct {
	Stdout, Stderr io.Writer
	// Environ is the environment: PATH finds the commands, and the
	// os-apply-config variables find the metadata.
	Environ []string
	// Root prefixes every system path; "" in production.
	Root string
}

// ProcessEnv is the Env of the running process.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ(), Root: os.Getenv(RootVar)}
}

// Getenv is the value of a variable of Environ, and whether it is set.
func (e Env) Getenv(name string) (string, bool) {
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e.Environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Path is the system path p under Root.
func (e Env) Path(p string) string { return e.Root + p }

// Logger is the step's logger: "<name>: <LEVEL>: message" lines on
// stderr, or journal entries under systemd.
func (e Env) Logger(name string) *slog.Logger {
	return logging.New(e.Stderr, logging.Options{
		Identifier: name, Level: slog.LevelInfo,
		Prefix: func(_ time.Time, l slog.Level) string { return name + ": " + logging.LevelName(l) + ": " },
	})
}

// MetadataFiles are the files os-apply-config --key would merge, in
// order (metadata.Files), the built-in paths under Root.
func (e Env) MetadataFiles() ([]string, error) {
	return metadata.Files(e.Getenv, e.Root)
}

// Lookup reads the metadata and returns the value at the dotted key, as
// os-apply-config --key does; found is false when it is missing or null.
func (e Env) Lookup(key string) (v jsondoc.Value, found bool, err error) {
	files, err := e.MetadataFiles()
	if err != nil {
		return nil, false, err
	}
	cfg, err := metadata.Read(files)
	if err != nil {
		return nil, false, err
	}
	v, found = metadata.Lookup(cfg, key)
	return v, found, nil
}

// WriteFile replaces path with data in one rename, the file's mode perm,
// and syncs the directory: the file is the old one or the new one, never
// a part, even across a power cut. The owner of the file it replaces is
// kept (the steps run as root), set with the mode on the staged file
// before the rename: the file never has another owner, not for an
// instant.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	uid, gid := -1, -1
	if st, err := os.Stat(path); err == nil {
		if u, g := ownerOf(st); u >= 0 && (u != os.Geteuid() || g != os.Getegid()) {
			uid, gid = u, g
		}
	}
	if err := durable.WriteFileOwned(path, data, perm, uid, gid); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ModeOr is the permission bits of the file at path, or def when there is
// none: a replaced file keeps its mode.
func ModeOr(path string, def fs.FileMode) fs.FileMode {
	if st, err := os.Stat(path); err == nil {
		return st.Mode().Perm()
	}
	return def
}

// Resolve follows the links of path, so that a replaced /etc/hosts that
// is a link replaces the file it points to, not the link (as the
// reference's shell redirections write through it). A dangling or
// unreadable path is returned as is.
func Resolve(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return path
}

// commandTimeout bounds each command a step runs (sysctl, ifdown, ...).
const commandTimeout = 5 * time.Minute

// Command runs name (looked up in the Env's PATH) with args, its output
// on the step's stdout and stderr, or on stdout when given; it returns
// an error naming the command when it cannot start or fails.
func (e Env) Command(ctx context.Context, stdout io.Writer, name string, args ...string) error {
	path, err := e.LookPath(name)
	if err != nil {
		return err
	}
	if stdout == nil {
		stdout = e.Stdout
	}
	res, err := proc.Run(ctx, proc.Spec{
		Path: path, Args: append([]string{name}, args...), Env: e.Environ,
		Stdout: stdout, Stderr: e.Stderr, Timeout: commandTimeout,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s %s: exit status %d", name, strings.Join(args, " "), res.Returncode())
	}
	return nil
}

// LookPath finds name in the Env's PATH.
func (e Env) LookPath(name string) (string, error) {
	dirs, _ := e.Getenv("PATH")
	for _, d := range filepath.SplitList(dirs) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", name)
}
