// Package secret is the one place that decides how credentials are kept
// out of logs, journal fields and messages: a String prints as "***"
// however it is formatted, logged or marshalled, and URLs lose the parts
// that carry credentials (user info, and the query, where signed and
// temporary URLs keep their signatures) before anyone prints them.
package secret

import (
	"log/slog"
	"net/url"
)

// Redacted is what a secret prints as.
const Redacted = "***"

// String is a credential (a password, a secret key). Only Reveal gives
// its value, for the one place that sends it.
type String string

// String prints it redacted (fmt's %s, %v, %q, %x all use it).
func (String) String() string { return Redacted }

// GoString prints it redacted for %#v.
func (String) GoString() string { return `"` + Redacted + `"` }

// LogValue logs it redacted, in text and as a journal field.
func (String) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalText marshals it redacted (JSON, YAML and the like): a state
// or status file must not carry it by accident.
func (String) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// Reveal is the value, for a request that needs it.
func (s String) Reveal() string { return string(s) }

// RedactURL drops a URL's user info, query and fragment, for messages.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
