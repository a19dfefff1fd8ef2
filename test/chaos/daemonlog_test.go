package chaos

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logTap keeps a process's log lines with the time each arrived.
type logTap struct {
	mu    sync.Mutex
	lines []logLine
	done  chan struct{}
}

type logLine struct {
	at   time.Time
	text string
}

func tap(r io.Reader, copyTo io.Writer) *logTap {
	l := &logTap{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(copyTo, sc.Text())
			l.mu.Lock()
			l.lines = append(l.lines, logLine{time.Now(), sc.Text()})
			l.mu.Unlock()
		}
		io.Copy(io.Discard, r)
	}()
	return l
}

func (l *logTap) all() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logLine(nil), l.lines...)
}

func (l *logTap) text() string {
	var b strings.Builder
	for _, ln := range l.all() {
		b.WriteString(ln.text + "\n")
	}
	return b.String()
}

func (l *logTap) count(s string) int {
	n := 0
	for _, ln := range l.all() {
		if strings.Contains(ln.text, s) {
			n++
		}
	}
	return n
}

var sleepLine = regexp.MustCompile(`^Sleeping ([0-9.]+) seconds\.$`)

// checkLog checks what an operator sees at the default level: the
// source's unavailability, each time followed by the backoff (the sleep
// before the next pass: the doubling ramp up to polling_interval, each
// sleep jittered to no more than its length, so the sleeps stay within
// the interval and grow to at least half of it); no secret. It returns
// the distinct sleeps seen.
func checkLog(t *verdict, l *logTap, s *stand, m mode) []float64 {
	text := l.text()
	for _, secret := range []string{password, secretKey, "temp_url_sig=0123abcd"} {
		if strings.Contains(text, secret) {
			t.Errorf("a secret in the log: %q", secret)
		}
	}
	unavailable := "Source [" + s.collector + "] Unavailable."
	if !strings.Contains(text, unavailable) {
		t.Errorf("the faults never made the source unavailable; log:\n%s", text)
	}
	seen := map[float64]bool{}
	waiting := false // an unavailability not yet followed by a sleep
	for _, ln := range l.all() {
		if sm := sleepLine.FindStringSubmatch(ln.text); sm != nil {
			f, _ := strconv.ParseFloat(sm[1], 64)
			seen[f] = true
			waiting = false
			// 0.00 is a sleep under 5 ms, as the log rounds it: at the
			// full interval the daemon keeps its phase, and a pass that
			// ran almost to the next planned start sleeps almost nothing.
			if f < 0 || f > float64(m.polling)+0.005 {
				t.Errorf("slept %v s, beyond polling_interval %d s", f, m.polling)
			}
		}
		if ln.text == unavailable {
			if waiting {
				t.Errorf("a pass with the source unavailable showed no sleep after it, at %s", ln.at.Format(time.StampMilli))
			}
			waiting = true
		}
	}
	var sleeps []float64
	for f := range seen {
		sleeps = append(sleeps, f)
	}
	sort.Float64s(sleeps)
	if len(sleeps) == 0 || sleeps[len(sleeps)-1] < float64(m.polling)/2 {
		t.Errorf("no visible backoff up to polling_interval %d s after the source failed: sleeps logged %v", m.polling, sleeps)
	}
	return sleeps
}

// checkTokenSteps: a token revoked or expired early is replaced at
// once, the source never unavailable for it.
func checkTokenSteps(t *verdict, l *logTap, played []Played) {
	for _, p := range played {
		if p.Fault != None {
			continue
		}
		// A pass that began in the fault before may end in this step.
		from := p.Start.Add(dripFor() + 2*time.Second)
		for _, ln := range l.all() {
			if ln.at.After(from) && ln.at.Before(p.End) && strings.Contains(ln.text, "Unavailable.") {
				t.Errorf("%s: the source was unavailable at %s", p.Event, ln.at.Format(time.StampMilli))
			}
		}
	}
}
