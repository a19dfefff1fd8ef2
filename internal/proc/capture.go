package proc

import "sync"

// Capture is an io.Writer that keeps at most Head bytes from the start of
// a stream and Tail bytes from its end, counting what it dropped in
// between (like os/exec's prefixSuffixSaver), so a chatty child cannot
// fill the parent's memory while the start and the end of its output,
// where the useful messages are, stay available. It is safe for
// concurrent use.
type Capture struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	tail    []byte // a ring once full: the oldest byte is at tailOff
	tailOff int
	n       int64
}

// NewCapture returns a Capture keeping head bytes from the start and tail
// bytes from the end; a negative size counts as zero.
func NewCapture(head, tail int) *Capture {
	return &Capture{headMax: max(head, 0), tailMax: max(tail, 0)}
}

// Write keeps what fits in the head and the tail. It never fails.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.n += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || c.tailMax == 0 {
		return n, nil
	}
	if len(p) >= c.tailMax {
		// The chunk alone fills the tail.
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		c.tailOff = 0
		return n, nil
	}
	if room := c.tailMax - len(c.tail); room > 0 {
		k := min(room, len(p))
		c.tail = append(c.tail, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(c.tail[c.tailOff:], p)
		p = p[k:]
		c.tailOff = (c.tailOff + k) % c.tailMax
	}
	return n, nil
}

// Bytes returns a copy of the head followed by the tail, nothing inserted;
// when nothing was dropped, it is exactly the stream.
func (c *Capture) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]byte, 0, len(c.head)+len(c.tail))
	out = append(out, c.head...)
	out = append(out, c.tail[c.tailOff:]...)
	return append(out, c.tail[:c.tailOff]...)
}

// Dropped is the number of bytes dropped between the head and the tail.
func (c *Capture) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n - int64(len(c.head)) - int64(len(c.tail))
}

// Len is the number of bytes written.
func (c *Capture) Len() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
