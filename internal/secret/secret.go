// Package secret is the one place that decides how credentials are kept
// out of logs, journal fields and messages: a String prints as "***"
// however it is formatted, logged or marshalled, and URLs lose the parts
// that carry credentials (user info, and the query, where signed and
// temporary URLs keep their signatures) before anyone prints them.
package secret

import (
	"log/slog"
	"net/url"
	"strings"
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

// SensitiveName tells whether a deployment input, option or field called
// name carries a credential (deploy_password, a secret key, a token),
// so that its value is never logged. Signal URLs (deploy_signal_id) are
// credentials too, but are logged through RedactURL instead.
func SensitiveName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"password", "secret", "token", "credential", "private_key", "signature"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Redactor replaces known secret values in text with Redacted: output of
// a child that may have echoed a credential it was given.
type Redactor struct{ values []string }

// NewRedactor redacts each of values; values shorter than 4 bytes are
// ignored (they would redact ordinary words).
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		if len(v) >= 4 {
			r.values = append(r.values, v)
		}
	}
	return r
}

// Redact returns s with every secret value replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}
