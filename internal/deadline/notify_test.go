package deadline

import (
	"strings"
	"testing"
	"time"

	"github.com/tripleo-go/agent/internal/proc"
)

// The signal's default budget ends well before 55-heat-config stops
// waiting for heat-config-notify; the documented figures stay.
func TestNotifyDefaults(t *testing.T) {
	if NotifyRun != 15*time.Minute || DefaultNotifyRetry != 5*time.Minute {
		t.Errorf("NotifyRun %v, DefaultNotifyRetry %v: the documented 15m and 5m", NotifyRun, DefaultNotifyRetry)
	}
	if DefaultNotifyRetry >= NotifyRun {
		t.Errorf("the retry budget %v does not end before the run's deadline %v", DefaultNotifyRetry, NotifyRun)
	}
}

// Unset or empty is the default; seconds (fractions allowed) or a Go
// duration are taken, 0 too; anything else, or a negative budget, is an
// error naming the variable and the value, with the default.
func TestNotifyRetry(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
		bad   bool
	}{
		{"", DefaultNotifyRetry, false},
		{"4", 4 * time.Second, false},
		{"0.3", 300 * time.Millisecond, false},
		{"90s", 90 * time.Second, false},
		{"0", 0, false},
		{"soon", DefaultNotifyRetry, true},
		{"-1", DefaultNotifyRetry, true},
		{"-1s", DefaultNotifyRetry, true},
	} {
		got, err := NotifyRetry([]string{"PATH=/bin", NotifyRetryVar + "=" + tc.value})
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%q: %v, %v; want %v, error %v", tc.value, got, err, tc.want, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), NotifyRetryVar+`="`+tc.value+`"`) {
			t.Errorf("%q: error %q does not name the variable and value", tc.value, err)
		}
	}
	if got, err := NotifyRetry(nil); got != DefaultNotifyRetry || err != nil {
		t.Errorf("unset: %v, %v", got, err)
	}
}

// What 55-heat-config writes, heat-config-notify reads back.
func TestNotifyRetryEntry(t *testing.T) {
	for _, d := range []time.Duration{4 * time.Second, 1500 * time.Millisecond, 80 * time.Millisecond, 0} {
		entry := NotifyRetryEntry(d)
		if got, err := NotifyRetry([]string{entry}); got != d || err != nil {
			t.Errorf("%s read back as %v, %v; want %v", entry, got, err, d)
		}
	}
	if got := NotifyRetryEntry(4 * time.Second); got != "HEAT_CONFIG_NOTIFY_RETRY_TIMEOUT=4" {
		t.Errorf("entry %q", got)
	}
}

// The signal sent when stopped follows the grace before SIGKILL: its
// run ends inside the grace, its retries inside the run; with proc's
// 10 s it is the 8 s and 4 s that were documented.
func TestStopNotifyFollowsGrace(t *testing.T) {
	for _, tc := range []struct{ grace, run, retry time.Duration }{
		{10 * time.Second, 8 * time.Second, 4 * time.Second},
		{5 * time.Second, 4 * time.Second, 2 * time.Second},
		{30 * time.Second, 24 * time.Second, 12 * time.Second},
		{200 * time.Millisecond, 160 * time.Millisecond, 80 * time.Millisecond},
	} {
		got := StopNotify(tc.grace)
		if got.Run != tc.run || got.Retry != tc.retry {
			t.Errorf("StopNotify(%v) = %+v, want run %v, retry %v", tc.grace, got, tc.run, tc.retry)
		}
		if !(got.Retry < got.Run && got.Run < tc.grace) {
			t.Errorf("StopNotify(%v) = %+v does not nest inside the grace", tc.grace, got)
		}
	}
	if StopGrace != proc.DefaultGrace {
		t.Errorf("StopGrace %v is not proc's grace %v", StopGrace, proc.DefaultGrace)
	}
	if got := StopNotify(StopGrace); got.Run != 8*time.Second || NotifyRetryEntry(got.Retry) != NotifyRetryVar+"=4" {
		t.Errorf("the stop signal's budget is %+v, not the documented 8 s run with a 4 s budget", got)
	}
}
