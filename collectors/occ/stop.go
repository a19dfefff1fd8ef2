package occ

import (
	"errors"
	"fmt"
	"github.com/tripleo-go/agent/collectors/all"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/tripleo-go/agent/collectors/config"
	"github.com/tripleo-go/agent/internal/agentstate"
	"github.com/tripleo-go/agent/internal/secret"
)

// A configuration that os-collect-config refuses stops it before its
// first pass, as a daemon or with --one-time: under systemd the unit
// starts it again, in vain, until someone fixes the file. The pass record
// alone would go on telling the last pass, healthy or none; so the stop
// is added to it, for tripleo-agent-status, and said to systemd
// (systemctl status shows it while the unit waits to restart). The next
// pass's record replaces it.

// isConfigError tells a configuration os-collect-config refused from a
// command line it could not parse (a usage error, recorded nowhere: the
// run did not know what it was asked to do).
func isConfigError(err error) bool {
	return errors.As(err, new(*config.Error)) || errors.As(err, new(*config.FileError)) || errors.As(err, new(*CollectorsError))
}

// recordStop leaves the stop in the status record and tells systemd. A
// run that only prints (--print, --print-cachedir) is no pass of the
// agent's and leaves none.
func recordStop(env Env, log *slog.Logger, args []string, err error, exit int) {
	if !isConfigError(err) || printsOnly(args) {
		return
	}
	// One line, and no URL's query: the value refused may be a signed URL.
	msg := secret.RedactText(strings.Join(strings.Fields(err.Error()), " "))
	env.Notify.Status("stopped: configuration refused: " + msg)
	if env.StatusDir == "" {
		return
	}
	stop := agentstate.Stop{At: time.Now(), Cause: "configuration", Error: msg, Exit: exit}
	if werr := agentstate.WriteStop(env.StatusDir, stop); werr != nil {
		log.Warn(fmt.Sprintf("Could not write the status record: %v", werr))
	}
}

// printsOnly reports a command line that asks to print and exit.
func printsOnly(args []string) bool {
	set := newConfig(all.Collectors).options(all.Collectors)
	res, err := set.Parser().Parse(args, io.Discard)
	return err == nil && (res.Last("--print", "--noprint") == "--print" || res.Last("--print-cachedir", "--noprint-cachedir") == "--print-cachedir")
}
