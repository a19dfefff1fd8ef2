package chaos

import (
	"context"
	"time"
)

// Step is one stretch of a schedule: a fault for a while, and what
// happens as it starts.
type Step struct {
	Fault Fault
	For   time.Duration
	// Event names what Do does as the step starts (a token revoked, the
	// metadata changed); both may be empty.
	Event string
	Do    func()
}

// Played is a step as it went.
type Played struct {
	Step
	Start, End time.Time
	// Hits is how many requests suffered the step's fault.
	Hits int
}

// Play sets each step's fault on in, in order, for the step's time,
// and clears it at the end. A step whose fault no request suffered in
// its time is drawn out, up to three times as long, until one does: a
// fault that nothing met proves nothing. It stops early when ctx ends.
func Play(ctx context.Context, in *Injector, steps []Step) ([]Played, error) {
	defer in.Set(None)
	var out []Played
	for _, s := range steps {
		p := Played{Step: s, Start: time.Now()}
		before := in.Injected()[s.Fault]
		in.Set(s.Fault)
		if s.Do != nil {
			s.Do()
		}
		ok := sleep(ctx, s.For)
		for longest := p.Start.Add(3 * s.For); ok && s.Fault != None && in.Injected()[s.Fault] == before && time.Now().Before(longest); {
			ok = sleep(ctx, s.For/10)
		}
		p.End, p.Hits = time.Now(), in.Injected()[s.Fault]-before
		if s.Fault == None {
			p.Hits = 0
		}
		out = append(out, p)
		if !ok {
			return out, ctx.Err()
		}
	}
	return out, nil
}
