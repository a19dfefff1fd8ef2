// Package logging builds the slog loggers of the programs. On a terminal or
// a pipe it prints the reference's line format, "[2026/11/22 04:20:19 AM]
// [INFO] message", so operators' greps and log scrapers keep working; when
// stderr is connected to journald (JOURNAL_STREAM) it sends native journal
// entries with the record's attributes as fields instead.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
)

// Options chooses where and how a program logs.
type Options struct {
	// Identifier is the SYSLOG_IDENTIFIER under journald.
	Identifier string
	Level      slog.Leveler
	// Extra receives a copy of every line (the optional --log-file).
	Extra io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Prefix starts each text line; nil means os-apply-config's
	// "[2026/11/22 04:20:19 AM] [INFO] ".
	Prefix func(t time.Time, level slog.Level) string
	// QuietAttrs leaves attributes out of text lines (they still become
	// journal fields), for lines whose text must stay the reference's.
	QuietAttrs bool
	// Journal, when set, receives journal entries whatever stderr is: a
	// test's stand-in for journald.
	Journal func(msg string, pri journal.Priority, vars map[string]string) error
}

// OACPrefix is os-apply-config's line start.
func OACPrefix(t time.Time, l slog.Level) string {
	return t.Format("[2006/01/02 03:04:05 PM] [") + LevelName(l) + "] "
}

// PythonPrefix is the line start of a Python logger named name with the
// format "[%(asctime)s] (%(name)s) [%(levelname)s] ".
func PythonPrefix(name string) func(time.Time, slog.Level) string {
	return func(t time.Time, l slog.Level) string {
		return t.Format("[2006-01-02 15:04:05,000] (") + name + ") [" + LevelName(l) + "] "
	}
}

// DatePrefix is dib-run-parts' line start: the program name and date(1)'s
// default output in the C locale.
func DatePrefix(name string) func(time.Time, slog.Level) string {
	return func(t time.Time, _ slog.Level) string {
		return name + " " + t.Format("Mon Jan _2 15:04:05 MST 2006") + " "
	}
}

// LevelCritical is Python's CRITICAL level.
const LevelCritical = slog.Level(12)

// LevelEvent marks journal-only records: structured events for operators
// (a key changed, a command ended) that have no line in the reference's
// text log, whose bytes operators' scrapers rely on. Text handlers drop
// them; the journal keeps them at priority info whatever the threshold.
const LevelEvent = slog.LevelInfo + 1

// New returns a logger writing to stderr: to journald when stderr is the
// journal stream, else as text in the reference's format.
func New(stderr io.Writer, opts Options) *slog.Logger {
	if opts.Level == nil {
		opts.Level = slog.LevelInfo
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Prefix == nil {
		opts.Prefix = OACPrefix
	}
	if opts.Journal != nil {
		return slog.New(&journalHandler{opts: opts, fallback: newTextHandler(stderr, opts), send: opts.Journal})
	}
	if f, ok := stderr.(*os.File); ok && isJournalStream(f) && journal.Enabled() {
		return slog.New(&journalHandler{opts: opts, fallback: newTextHandler(stderr, opts)})
	}
	return slog.New(newTextHandler(stderr, opts))
}

// IsJournal tells whether l sends native journal entries (stderr is the
// journal stream), for callers that log a multi-line text as one record
// on a terminal but as one entry per line in the journal.
func IsJournal(l *slog.Logger) bool {
	_, ok := l.Handler().(*journalHandler)
	return ok
}

// isJournalStream follows systemd.exec(5): JOURNAL_STREAM names the device
// and inode of the stream journald gave the service; it is inherited by
// children whose stderr may be a pipe, so compare with our own stderr.
func isJournalStream(f *os.File) bool {
	want := os.Getenv("JOURNAL_STREAM")
	if want == "" {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return want == fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

type textHandler struct {
	mu    *sync.Mutex
	out   []io.Writer
	opts  Options
	attrs []slog.Attr
}

func newTextHandler(w io.Writer, opts Options) *textHandler {
	out := []io.Writer{w}
	if opts.Extra != nil {
		out = append(out, opts.Extra)
	}
	return &textHandler{mu: &sync.Mutex{}, out: out, opts: opts}
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l != LevelEvent && l >= h.opts.Level.Level()
}

// LevelName uses Python logging's names.
func LevelName(l slog.Level) string {
	switch {
	case l >= LevelCritical:
		return "CRITICAL"
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.opts.Prefix(h.opts.Now(), r.Level))
	b.WriteString(r.Message)
	// Attributes follow the message, so the reference's text stays a prefix.
	write := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteByte('=')
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \"=\n") {
			v = fmt.Sprintf("%q", v)
		}
		b.WriteString(v)
		return true
	}
	if !h.opts.QuietAttrs {
		for _, a := range h.attrs {
			write(a)
		}
		r.Attrs(write)
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.out {
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

func (h *textHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &n
}

func (h *textHandler) WithGroup(string) slog.Handler { return h }

// journalSend is journal.Send, replaceable in tests.
var journalSend = journal.Send

type journalHandler struct {
	send     func(string, journal.Priority, map[string]string) error
	opts     Options
	attrs    []slog.Attr
	fallback *textHandler
}

func (h *journalHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l == LevelEvent || l >= h.opts.Level.Level()
}

func priority(l slog.Level) journal.Priority {
	switch {
	case l >= LevelCritical:
		return journal.PriCrit
	case l >= slog.LevelError:
		return journal.PriErr
	case l >= slog.LevelWarn:
		return journal.PriWarning
	case l >= slog.LevelInfo:
		return journal.PriInfo
	}
	return journal.PriDebug
}

// fieldName turns an attribute key into a journal field name: upper case
// letters, digits and underscores, not starting with an underscore.
func fieldName(k string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(k) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.TrimLeft(b.String(), "_")
}

func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	vars := map[string]string{"SYSLOG_IDENTIFIER": h.opts.Identifier}
	add := func(a slog.Attr) bool {
		if k := fieldName(a.Key); k != "" {
			vars[k] = a.Value.Resolve().String()
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	send := h.send
	if send == nil {
		send = journalSend
	}
	err := send(r.Message, priority(r.Level), vars)
	if r.Level == LevelEvent {
		return err // never text, not even in the --log-file copy
	}
	if err != nil {
		return h.fallback.Handle(ctx, r)
	}
	if len(h.fallback.out) > 1 { // keep the --log-file copy
		extra := &textHandler{mu: h.fallback.mu, out: h.fallback.out[1:], opts: h.opts, attrs: h.attrs}
		return extra.Handle(ctx, r)
	}
	return nil
}

func (h *journalHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	n.fallback = h.fallback.WithAttrs(attrs).(*textHandler)
	return &n
}

func (h *journalHandler) WithGroup(string) slog.Handler { return h }

// Discard is a logger that drops everything (for tests, and for code
// given no logger).
var Discard = slog.New(slog.DiscardHandler)
