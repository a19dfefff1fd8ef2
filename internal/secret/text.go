package secret

import (
	"regexp"
	"strings"
	"sync"
)

var (
	// urlInText is a URL in free text (a log line, a config value).
	urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\\]+`) })
	// assignment is a credential given by name: password=..., "deploy_password": "...",
	// X-Auth-Token: ..., secret_access_key = ...
	assignment = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:password|passwd|secret|token|credential|private_key|signature|temp_url_sig)[A-Za-z0-9_.-]*)("?'?\s*[:=]\s*"?'?)([^\s"',;&}\]]+)`)
	})
	// bearer is an Authorization header's credentials.
	bearer = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(Authorization:\s*\S+\s+|Bearer\s+|Basic\s+)[A-Za-z0-9._~+/=-]{8,}`)
	})
)

// RedactText removes from free text (a journal, a configuration file, a
// command's output) what carries credentials: every URL's user info and
// query (signed and temporary URLs keep their signatures there), the value
// of anything assigned to a name SensitiveName would flag, and bearer
// credentials. It cannot know a secret printed on its own: a Redactor
// given the known values does that.
func RedactText(s string) string {
	s = urlInText().ReplaceAllStringFunc(s, redactURLInText)
	s = assignment().ReplaceAllString(s, "${1}${2}"+Redacted)
	return bearer().ReplaceAllString(s, "${1}"+Redacted)
}

// redactURLInText keeps a URL's scheme, host and path: what an operator
// needs to tell which endpoint it was.
func redactURLInText(u string) string {
	trail := len(u) - len(strings.TrimRight(u, ".,:;)]"))
	u, end := u[:len(u)-trail], u[len(u)-trail:]
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		host := rest
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			u = u[:i+3] + Redacted + "@" + rest[at+1:]
		}
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i+1] + Redacted
	}
	return u + end
}
