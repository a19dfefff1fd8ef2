package heatconfig

import (
	"fmt"
	"sync"

	"github.com/tripleo-go/agent/internal/proc"
)

// stdoutCapture keeps a hook's stdout in as little memory as it can: a
// result object (the output starts with "{") is kept whole up to
// stdoutHead, to be parsed; any other output can only be signalled as
// text, of which the tail is what Heat gets, so only outputTail of it is
// kept from the start: a hook printing 100 MB of text costs 512 KiB.
type stdoutCapture struct {
	mu      sync.Mutex
	decided bool
	object  *proc.Capture // head and tail, while it may be a result
	text    *proc.Capture // the tail only
}

func newStdoutCapture() *stdoutCapture {
	return &stdoutCapture{object: proc.NewCapture(stdoutHead, outputTail), text: proc.NewCapture(0, outputTail)}
}

func (c *stdoutCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.decided {
		if i := firstNonSpace(p); i >= 0 {
			if p[i] == '{' {
				c.text = nil
			} else {
				c.object = nil
			}
			c.decided = true
		}
	}
	if c.object != nil {
		c.object.Write(p)
	}
	if c.text != nil {
		c.text.Write(p)
	}
	return len(p), nil
}

func firstNonSpace(p []byte) int {
	for i, b := range p {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return i
		}
	}
	return -1
}

// result is what was kept, and whether it lost bytes (then it is no
// result object).
func (c *stdoutCapture) result() (out []byte, truncated bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.object != nil {
		return joined(c.object), c.object.Dropped() > 0
	}
	return joined(c.text), c.text.Dropped() > 0
}

// joined is what a capture kept. When it dropped the middle, the output
// is no result object: only its tail is kept, where the errors are,
// after a line that says how much went, so a reader of deploy_stdout
// knows (and the copies made for the log and the signal stay small).
func joined(c *proc.Capture) []byte {
	b := c.Bytes()
	if n := c.Dropped(); n > 0 {
		if len(b) > outputTail {
			n += int64(len(b) - outputTail)
			b = b[len(b)-outputTail:]
		}
		return append([]byte(fmt.Sprintf("[... %d bytes dropped ...]\n", n)), b...)
	}
	return b
}
