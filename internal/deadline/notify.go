package deadline

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tripleo-go/agent/internal/environ"
	"github.com/tripleo-go/agent/internal/proc"
)

// The signal's deadlines: 55-heat-config runs heat-config-notify under
// NotifyRun, and heat-config-notify retries a signal for its budget
// (NotifyRetryVar, DefaultNotifyRetry), which must end first; stopped,
// 55-heat-config signals under StopNotify, which must end within the
// grace its parent gives it.

// NotifyRun bounds one heat-config-notify run that 55-heat-config
// starts.
const NotifyRun = 15 * time.Minute

// NotifyRetryVar names heat-config-notify's retry budget: seconds, or a
// Go duration ("90s", "5m"); 0 sends each request once. 55-heat-config
// sets it for the signal it sends when stopped.
const NotifyRetryVar = "HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT"

// DefaultNotifyRetry bounds the retries of one signal (heat-config-notify's,
// 99-refresh-completed's): a third of NotifyRun, so a signal whose retries
// ran out still ends, with its own error line, well before 55-heat-config
// stops waiting for it.
const DefaultNotifyRetry = NotifyRun / 3

// NotifyRetry is the retry budget environ sets: DefaultNotifyRetry when
// NotifyRetryVar is unset or empty, 0 for no retries. A value that is
// not a number of seconds or a duration, or is negative, is an error
// naming it, with DefaultNotifyRetry.
func NotifyRetry(env []string) (time.Duration, error) {
	v, ok := environ.Lookup(env, NotifyRetryVar)
	if !ok || v == "" {
		return DefaultNotifyRetry, nil
	}
	d, err := time.ParseDuration(v)
	if s, ferr := strconv.ParseFloat(v, 64); ferr == nil {
		d, err = time.Duration(s*float64(time.Second)), nil
	}
	if err != nil || d < 0 {
		return DefaultNotifyRetry, fmt.Errorf("%s=%q: not a number of seconds", NotifyRetryVar, v)
	}
	return d, nil
}

// NotifyRetryEntry is the environment entry that gives heat-config-notify
// the retry budget d, in seconds as NotifyRetry reads them.
func NotifyRetryEntry(d time.Duration) string {
	return NotifyRetryVar + "=" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// StopGrace is the time 55-heat-config has between SIGTERM and SIGKILL
// when it is stopped: internal/proc's default grace, which os-collect-config
// gives its command.
const StopGrace = proc.DefaultGrace

// StopBudget is how long the signal 55-heat-config sends when it is
// stopped may take.
type StopBudget struct {
	// Run bounds the heat-config-notify run.
	Run time.Duration
	// Retry is the run's retry budget (NotifyRetryVar): half of Run,
	// so the last attempt, cut at the budget's end, and the program's
	// start and exit fit in it.
	Retry time.Duration
}

// StopNotify is the budget of the signal sent when stopped, within the
// grace grace before SIGKILL: four fifths of it, so heat-config-notify
// is past its own deadline and 55-heat-config has logged and exited
// before the kill.
func StopNotify(grace time.Duration) StopBudget {
	run := grace * 4 / 5
	return StopBudget{Run: run, Retry: run / 2}
}
