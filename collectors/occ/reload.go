package occ

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"github.com/tripleo-go/agent/collectors/config"
)

// The daemon restarts, as the reference does, when its configuration
// changes (os-apply-config rewrites it on TripleO nodes) or on SIGHUP.

// configChanged reports a valid configuration that differs from the
// one the process started with. An invalid one is logged (once per
// distinct error) and ignored: restarting into it would stop the daemon,
// and with it the node's configuration, until someone fixes the file.
func (r *runner) configChanged() bool {
	h, err := configHash(r.args, r.env)
	if r.noteInvalid(err) {
		return false
	}
	return h != r.configHash
}

// configValid is configChanged's check alone, for SIGHUP.
func (r *runner) configValid() bool {
	_, err := configHash(r.args, r.env)
	return !r.noteInvalid(err)
}

func (r *runner) noteInvalid(err error) bool {
	if err == nil {
		r.badConfig = ""
		return false
	}
	if err.Error() != r.badConfig {
		r.log.Error(fmt.Sprintf("The configuration is invalid; still running with the one read at start: %v", err))
		r.badConfig = err.Error()
	}
	return true
}

// configHash covers which files the configuration comes from and what
// they hold, so an edited file, or one added to or removed from the
// .conf.d directory, is a change.
func configHash(args []string, env Env) (string, error) {
	cfg, err := Parse(args, config.Env{LookupEnv: env.lookup, Root: env.Root})
	if err == nil {
		err = cfg.CheckCollectors()
	}
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range cfg.ConfigFiles {
		fmt.Fprintf(h, "%s\x00", f)
		if data, err := os.ReadFile(f); err == nil {
			h.Write(data)
		}
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// reload re-executes the program.
func (r *runner) reload(why string) error {
	r.log.Warn(why + "; restarting os-collect-config.")
	if r.env.Reexec == nil {
		return r.fail(errors.New("cannot restart: no way to re-execute"))
	}
	if err := r.env.Reexec(); err != nil {
		return r.fail(fmt.Errorf("restarting: %w", err))
	}
	return nil
}
