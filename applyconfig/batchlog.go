package applyconfig

import (
	"io"
	"log/slog"

	"github.com/tripleo-go/agent/internal/logging"
)

// A first render logs a line per file written: a thousand writes to
// stderr (and as many to --log-file), each a system call. While the
// files are put in place, lines are gathered and written in batches of
// whole lines; the batch is written out before the run goes on.

// batchSize is how much text gathers before it is written.
const batchSize = 32 << 10

// lineBatch gathers whole lines (a handler writes one line per Write)
// and writes them to w in batches.
type lineBatch struct {
	w   io.Writer
	buf []byte
}

func (b *lineBatch) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if len(b.buf) >= batchSize {
		b.flush()
	}
	return len(p), nil
}

// flush writes what has gathered; a write error is the logger's to
// ignore, as for any log line.
func (b *lineBatch) flush() {
	if len(b.buf) > 0 {
		_, _ = b.w.Write(b.buf)
		b.buf = b.buf[:0]
	}
}

// batchedLogger returns a logger like log whose lines are written in
// batches, and the function that writes out the last batch. A logger
// that sends to the journal (one entry per record) is returned as is.
func batchedLogger(log *slog.Logger, stderr io.Writer, opts logging.Options) (*slog.Logger, func()) {
	if logging.IsJournal(log) {
		return log, func() {}
	}
	out := &lineBatch{w: stderr}
	var extra *lineBatch
	if opts.Extra != nil {
		extra = &lineBatch{w: opts.Extra}
		opts.Extra = extra
	}
	return logging.New(out, opts), func() {
		out.flush()
		if extra != nil {
			extra.flush()
		}
	}
}
