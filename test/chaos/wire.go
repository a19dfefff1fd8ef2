package chaos

// What the faults write on the wire, below net/http: resets, answers
// that lie about their length, bodies without end, and a websocket's
// stream broken after its upgrade.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// writeDeadline bounds every write of a fault, should the client stop
// reading without closing.
const writeDeadline = 2 * time.Minute

func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, bool) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil, false
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, false
	}
	return conn, rw, true
}

// reset closes the connection with a TCP reset (SO_LINGER 0).
func reset(w http.ResponseWriter) {
	conn, _, ok := hijack(w)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	abort(conn)
}

func abort(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// writeHead writes a status line and headers.
func writeHead(b *bufio.Writer, status int, h http.Header) {
	fmt.Fprintf(b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	h.Write(b)
	b.WriteString("\r\n")
}

// writeRaw sends an answer that declares body's length and sends its
// first n bytes, spread over drip (all at once when zero), then closes
// the connection.
func writeRaw(w http.ResponseWriter, status int, h http.Header, body []byte, n int, drip time.Duration) {
	conn, rw, ok := hijack(w)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(drip + writeDeadline))
	h = h.Clone()
	h.Del("Transfer-Encoding")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Connection", "close")
	writeHead(rw.Writer, status, h)
	if drip <= 0 || n == 0 {
		rw.Write(body[:n])
		rw.Flush()
		return
	}
	if rw.Flush() != nil {
		return
	}
	step := drip / time.Duration(n)
	for i := range n {
		if _, err := conn.Write(body[i : i+1]); err != nil {
			return
		}
		time.Sleep(step)
	}
}

// hugeStart opens a JSON string that the rest of a huge body never
// closes: a reader must take it all before it can tell.
const hugeStart = `{"chaos": "`

// huge answers status with a body of size bytes, declared by
// Content-Length or chunked, until the client hangs up.
func huge(w http.ResponseWriter, status int, h http.Header, size int64, declared bool) {
	conn, rw, ok := hijack(w)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	defer conn.Close()
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified {
		status = http.StatusOK // statuses without a body
	}
	h = h.Clone()
	h.Del("Transfer-Encoding")
	h.Del("Content-Length")
	if declared {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	} else {
		h.Set("Transfer-Encoding", "chunked")
	}
	writeHead(rw.Writer, status, h)
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	copy(chunk, hugeStart)
	for left := size; left > 0; {
		conn.SetWriteDeadline(time.Now().Add(writeDeadline))
		c := chunk[:min(int64(len(chunk)), left)]
		if !declared {
			fmt.Fprintf(rw, "%x\r\n", len(c))
		}
		rw.Write(c)
		if !declared {
			rw.WriteString("\r\n")
		}
		if rw.Flush() != nil {
			return
		}
		left -= int64(len(c))
		copy(chunk, bytes.Repeat([]byte("a"), len(hugeStart)))
	}
	if !declared {
		rw.WriteString("0\r\n\r\n")
		rw.Flush()
	}
}

// faultyHijacker hands the stand-in a connection that breaks what it
// sends after the upgrade.
type faultyHijacker struct {
	http.ResponseWriter
	fault Fault
	in    *Injector
}

func (h *faultyHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, ok := hijack(h.ResponseWriter)
	if !ok {
		return nil, nil, errors.New("chaos: cannot hijack")
	}
	fc := &faultyConn{Conn: conn, fault: h.fault, in: h.in}
	return fc, bufio.NewReadWriter(rw.Reader, bufio.NewWriter(fc)), nil
}

// faultyConn passes the first write (the upgrade's answer) and breaks
// the next ones (the frames): the connection reset, a frame cut in half,
// each frame dripped, or a text frame of 1 GiB.
type faultyConn struct {
	net.Conn
	fault Fault
	in    *Injector

	mu     sync.Mutex
	writes int
}

var errBroken = errors.New("chaos: connection broken on purpose")

func (c *faultyConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.writes == 1 {
		return c.Conn.Write(p)
	}
	switch c.fault {
	case LostAnswer:
		abort(c.Conn)
		return 0, errBroken
	case Truncated:
		c.Conn.Write(p[:len(p)/2])
		c.Conn.Close()
		return 0, errBroken
	case Drip:
		step := c.in.dripFor() / time.Duration(max(len(p), 1))
		for i := range p {
			if _, err := c.Conn.Write(p[i : i+1]); err != nil {
				return i, err
			}
			time.Sleep(step)
		}
		return len(p), nil
	case Huge:
		c.hugeFrame(c.in.hugeSize())
		c.Conn.Close()
		return 0, errBroken
	}
	return c.Conn.Write(p)
}

// hugeFrame sends one unmasked text frame of size bytes.
func (c *faultyConn) hugeFrame(size int64) {
	head := []byte{0x81, 127, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(head[2:], uint64(size))
	c.Conn.SetWriteDeadline(time.Now().Add(writeDeadline))
	if _, err := c.Conn.Write(head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	copy(chunk, hugeStart)
	for left := size; left > 0; {
		c.Conn.SetWriteDeadline(time.Now().Add(writeDeadline))
		n, err := c.Conn.Write(chunk[:min(int64(len(chunk)), left)])
		if err != nil {
			return
		}
		left -= int64(n)
		copy(chunk, bytes.Repeat([]byte("a"), len(hugeStart)))
	}
}
