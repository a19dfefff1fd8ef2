package logging

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
)

var fixed = func() time.Time { return time.Date(2026, 11, 22, 16, 5, 9, 716e6, time.UTC) }

func TestTextPrefixes(t *testing.T) {
	for _, tc := range []struct {
		prefix func(time.Time, slog.Level) string
		want   string
	}{
		{OACPrefix, "[2026/11/22 04:05:09 PM] [WARNING] hello\n"},
		{PythonPrefix("os-refresh-config"), "[2026-11-22 16:05:09,716] (os-refresh-config) [WARNING] hello\n"},
		{DatePrefix("dib-run-parts"), "dib-run-parts Sun Nov 22 16:05:09 UTC 2026 hello\n"},
	} {
		var b bytes.Buffer
		New(&b, Options{Prefix: tc.prefix, Now: fixed, QuietAttrs: true}).Warn("hello", "script", "10-a")
		if b.String() != tc.want {
			t.Errorf("got %q, want %q", b.String(), tc.want)
		}
	}
	var b bytes.Buffer
	New(&b, Options{Now: fixed}).Info("x", "script", "10 a")
	if !strings.HasSuffix(b.String(), `x script="10 a"`+"\n") {
		t.Errorf("attrs: %q", b.String())
	}
}

// Under journald, attributes become fields (PHASE, SCRIPT, SECONDS, ...)
// even where the text line must stay the reference's.
func TestJournalFields(t *testing.T) {
	var got map[string]string
	var msg string
	var pri journal.Priority
	journalSend = func(m string, p journal.Priority, vars map[string]string) error {
		msg, pri, got = m, p, vars
		return nil
	}
	t.Cleanup(func() { journalSend = journal.Send })
	opts := Options{Identifier: "dib-run-parts", Level: slog.LevelInfo, Now: fixed, Prefix: OACPrefix, QuietAttrs: true}
	h := &journalHandler{opts: opts, fallback: newTextHandler(&bytes.Buffer{}, opts)}
	slog.New(h).With("phase", "configure").Error("10-a completed", "script", "10-a", "seconds", "0.012")
	if msg != "10-a completed" || pri != journal.PriErr || got["PHASE"] != "configure" || got["SCRIPT"] != "10-a" ||
		got["SECONDS"] != "0.012" || got["SYSLOG_IDENTIFIER"] != "dib-run-parts" {
		t.Fatalf("sent %q %v %v", msg, pri, got)
	}
}

// Events are journal-only: the text log keeps the reference's lines
// (and the --log-file copy too), the journal gets them at priority info
// even when the threshold is above info.
func TestEventsAreJournalOnly(t *testing.T) {
	var sent []string
	var pri journal.Priority
	journalSend = func(m string, p journal.Priority, vars map[string]string) error {
		sent, pri = append(sent, m+" key="+vars["KEY"]), p
		return nil
	}
	t.Cleanup(func() { journalSend = journal.Send })
	var text, extra bytes.Buffer
	opts := Options{Identifier: "os-collect-config", Level: slog.LevelDebug, Now: fixed, Extra: &extra}
	slog.New(newTextHandler(&text, opts)).Log(context.Background(), LevelEvent, "Metadata changed", "key", "a")
	if text.Len() != 0 || extra.Len() != 0 {
		t.Fatalf("an event reached the text log: %q %q", text.String(), extra.String())
	}
	opts.Level = slog.LevelWarn
	h := &journalHandler{opts: opts, fallback: newTextHandler(&text, opts)}
	slog.New(h).Log(context.Background(), LevelEvent, "Metadata changed", "key", "a")
	slog.New(h).Info("not at info")
	if len(sent) != 1 || sent[0] != "Metadata changed key=a" || pri != journal.PriInfo || text.Len() != 0 || extra.Len() != 0 {
		t.Fatalf("journal got %q at %v; text %q, log file %q", sent, pri, text.String(), extra.String())
	}
}
