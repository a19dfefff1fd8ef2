// Package deadline owns every deadline that crosses a program boundary,
// and derives each that must fit inside another from it. The hook
// deadline: HEAT_CONFIG_HOOK_TIMEOUT, its default, how a bad value is
// met, and how much longer 55-heat-config waits for a hook than the hook
// waits for its tool. The signal's (notify.go): how long 55-heat-config
// waits for heat-config-notify, heat-config-notify's retry budget
// (HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT) inside it, and the budget of the
// signal sent when stopped, inside internal/proc's grace. Both sides of
// each boundary read them here, so they cannot disagree.
package deadline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tripleo-go/agent/internal/environ"
)

// HookVar names a hook's deadline in seconds (a decimal fraction is
// allowed, for tests). The reference has no deadline at all.
const HookVar = "HEAT_CONFIG_HOOK_TIMEOUT"

// DefaultCommand is os-collect-config's default command-timeout, the
// deadline of one os-refresh-config run: TripleO's default overcloud
// stack timeout, past which Heat has given up on what the command
// applies.
const DefaultCommand = 4 * time.Hour

// DefaultHook is DefaultCommand: a hook stuck as long as the stack may
// take fails its deployment. (A hook that started late in a run is
// killed by the command's deadline first; both stay 4 h, as documented.)
const DefaultHook = DefaultCommand

// maxSlack bounds what Outer adds beyond the hook's grace.
const maxSlack = 5 * time.Second

// Hook is the hook deadline environ sets, DefaultHook when HookVar is
// unset or blank. A value that is not a positive number of seconds is an
// error naming it; every reader refuses to run on it (55-heat-config
// exits 1, a hook runs no tool) rather than guess a deadline.
func Hook(env []string) (time.Duration, error) {
	v := strings.TrimSpace(environ.Get(env, HookVar))
	if v == "" {
		return DefaultHook, nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || !(s > 0) || s > math.MaxInt64/float64(time.Second) {
		return DefaultHook, fmt.Errorf("%s=%q: want a positive number of seconds", HookVar, v)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// Outer is how long 55-heat-config lets a hook run whose tools have the
// deadline hook and the grace grace: past both, and a slack for the
// hook's own start and its result, so that a hook that stops its tool
// at the deadline reports its own result (status 124 with its note)
// before it is killed. The slack is 5 s, or the deadline itself when
// that is shorter (tests use fractions of a second).
func Outer(hook, grace time.Duration) time.Duration {
	return hook + grace + min(hook, maxSlack)
}

// ForManual is d as the manual pages say it: "4 hours", or Go's form when d
// is not a whole number of hours. The pages take the defaults from here,
// so a changed default changes what they say.
func ForManual(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + " hours"
	}
	return d.String()
}
