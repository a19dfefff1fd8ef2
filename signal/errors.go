package signal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"github.com/tripleo-go/agent/internal/httpclient"
	"github.com/tripleo-go/agent/internal/secret"
)

// HTTPError is a final answer that is not a success: after the retries
// for a transient one, at once for the others.
type HTTPError struct {
	Method string
	// URL is without its query (signatures live there).
	URL      string
	Status   int
	Attempts int
	// Detail is the server's own words, short and on one line.
	Detail string
	// Hint is the likely cause, when the transport knows one.
	Hint string
}

// NewHTTPError describes resp, the answer to method on rawURL.
func NewHTTPError(method, rawURL string, resp *httpclient.Response) *HTTPError {
	return &HTTPError{Method: method, URL: secret.RedactURL(rawURL), Status: resp.Status,
		Attempts: resp.Attempts, Detail: detail(resp.Body)}
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.URL, e.Status)
	if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" " + t)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// maxDetail bounds what of a server's answer goes into a message.
const maxDetail = 200

var (
	tags   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })
	spaces = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s+`) })
)

// detail is the gist of an error answer: the message of Heat's, Zaqar's
// or Keystone's JSON errors, else the text without markup (Swift's HTML,
// heat-api-cfn's XML), on one line, cut short.
func detail(body []byte) string {
	var j struct {
		Explanation string `json:"explanation"`
		Description string `json:"description"`
		Title       string `json:"title"`
		Error       struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	text := string(body)
	if json.Unmarshal(body, &j) == nil {
		for _, s := range []string{j.Error.Message, j.Explanation, j.Description, j.Title} {
			if s != "" {
				text = s
				break
			}
		}
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, tags().ReplaceAllString(text, " "))
	text = strings.TrimSpace(spaces().ReplaceAllString(text, " "))
	if len(text) > maxDetail {
		text = strings.ToValidUTF8(text[:maxDetail], "") + "..."
	}
	return text
}
