package occ

import "time"

// schedule is the daemon's sleeps between passes. As the reference's
// loop, the sleep starts at min-polling-interval and doubles up to
// polling-interval; unlike it, a change brings it back to the minimum.
//
// With jitter (the default), nodes started together, or held together by
// an outage, do not poll in step (a fleet in step is a spike of every
// node's request each interval; docs/scale.md):
//
//   - a sleep of the ramp lasts between half and all of its length;
//   - the first full-interval sleep after start or after a change lasts
//     between 0 and the interval: it gives the node a phase of its own;
//   - from then on passes start on that phase, one interval apart, however
//     long a pass took: a pass held up by a hung or failing service does
//     not move the node's next one, so a fleet that an outage held up
//     together comes back at the phases it had (a start that would fall
//     in the past is skipped).
//
// No sleep is longer than the reference's, so no node sees a change later.
type schedule struct {
	min, max time.Duration
	jitter   bool
	// rand returns a number in [0, 1).
	rand func() float64
	// wait is the next sleep before jitter.
	wait time.Duration
	// phased: the node has drawn its phase since the last ramp; next is
	// the planned start of the pass that ran last.
	phased bool
	next   time.Time
}

func newSchedule(min, max time.Duration, jitter bool, rand func() float64) *schedule {
	return &schedule{min: min, max: max, jitter: jitter, rand: rand, wait: min}
}

// sleep is the sleep after a pass that changed something or not, ending
// at now.
func (s *schedule) sleep(changed bool, now time.Time) time.Duration {
	if changed {
		s.wait, s.phased = s.min, false
	}
	d := s.wait
	s.wait = min(s.wait*2, s.max)
	switch {
	case !s.jitter || d <= 0:
		return d
	case d < s.max:
		return d/2 + s.upTo(d/2)
	case !s.phased:
		s.phased = true
		d = s.upTo(d)
		s.next = now.Add(d)
		return d
	}
	if now.Before(s.next) { // woken early: the planned pass stands
		return s.next.Sub(now)
	}
	// The first start one or more intervals after the last planned one
	// that is still ahead.
	late := now.Sub(s.next)
	s.next = s.next.Add(d * (max(late, 0)/d + 1))
	return s.next.Sub(now)
}

// upTo is a random duration in (0, d].
func (s *schedule) upTo(d time.Duration) time.Duration {
	return max(time.Duration((1-s.rand())*float64(d)), time.Nanosecond)
}
