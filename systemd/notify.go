// Package systemd tells systemd how a daemon is doing (sd_notify): READY=1
// once it has done its first full cycle, STATUS= lines, WATCHDOG=1 pings
// at half the unit's WatchdogSec, STOPPING=1 on the way out. Off systemd
// (no NOTIFY_SOCKET) every call does nothing. The unit files beside this
// file are what images install.
package systemd

import (
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends notifications; a nil *Notifier does nothing.
type Notifier struct {
	watchdog time.Duration // ping interval; 0: no watchdog
	lastPing time.Time
}

// New reads the service's notification settings from the environment.
func New() *Notifier {
	n := &Notifier{}
	if d, err := daemon.SdWatchdogEnabled(false); err == nil && d > 0 {
		n.watchdog = d / 2
	}
	return n
}

func (n *Notifier) send(state string) {
	if n != nil {
		_, _ = daemon.SdNotify(false, state)
	}
}

// Ready says the service is up (its first cycle done).
func (n *Notifier) Ready(status string) { n.send(daemon.SdNotifyReady + "\nSTATUS=" + status) }

// Status sets the one-line status systemctl shows.
func (n *Notifier) Status(status string) { n.send("STATUS=" + status) }

// Stopping says the service is shutting down.
func (n *Notifier) Stopping() { n.send(daemon.SdNotifyStopping) }

// WatchdogInterval is how often Ping must be called (0: never).
func (n *Notifier) WatchdogInterval() time.Duration {
	if n == nil {
		return 0
	}
	return n.watchdog
}

// Ping tells the watchdog the main loop is alive, at most once per
// interval. Call it from the loop itself, so a stuck loop is noticed.
func (n *Notifier) Ping() {
	if n == nil || n.watchdog == 0 || time.Since(n.lastPing) < n.watchdog/2 {
		return
	}
	n.lastPing = time.Now()
	n.send(daemon.SdNotifyWatchdog)
}
