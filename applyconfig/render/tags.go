package render

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/pystr"
)

// tag is one mustache tag as pystache's parser finds it.
type tag struct {
	start, end int    // byte offsets of the tag, delimiters included, indentation not
	kind       byte   // '#', '^', '/', '!', '>', '=', '&', '{' or 0 for a variable
	name       string // the key; for '=', the delimiters as written
	otag, ctag string // delimiters in force after this tag
	// delimsOK is false for a '=' tag that does not name two delimiters
	// (pystache fails on it).
	delimsOK bool
	// plain: read without pystache's expression, in a way the library
	// reads the same (see plainTag).
	plain bool
	// skipped: an opening delimiter before this tag (after the last) is
	// text to pystache.
	skipped bool
}

// pySpace is Python's \s in a str pattern: Unicode white space and the
// separators U+001C to U+001F.
const pySpace = `[\t\n\v\f\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

var tagPatterns sync.Map // [2]string{otag, ctag} -> *regexp.Regexp

// tagPattern is pystache 0.6's tag expression for the delimiters
// (parser._compile_template_re), anchored at an opening delimiter: its
// leading indentation is found apart. Go's regexp chooses the match a
// backtracking engine such as Python's would, so the tags found are
// pystache's. Groups: 1 "=", 2 new delimiters, 3 "{", 4 its name, 5 the
// sigil, 6 the key. Nil for delimiters that are not UTF-8, which no
// expression can hold.
func tagPattern(otag, ctag string) *regexp.Regexp {
	key := [2]string{otag, ctag}
	if re, ok := tagPatterns.Load(key); ok {
		return re.(*regexp.Regexp)
	}
	s := pySpace + `*`
	re, err := regexp.Compile(`^` + regexp.QuoteMeta(otag) + s +
		`(?:(=)` + s + `(.+?)` + s + `=` +
		`|(\{)` + s + `(.+?)` + s + `\}` +
		`|([!>&/#^]?)` + s + `((?s:.)+?))` +
		s + regexp.QuoteMeta(ctag))
	if err != nil {
		// Delimiters that are not UTF-8: templates are decoded before
		// they are scanned, so only a caller that skipped that meets it.
		return nil
	}
	tagPatterns.Store(key, re)
	return re
}

// scanTags walks the tags of src exactly as pystache's parser finds them
// (its regular expression, delimiter changes included) and calls fn for
// each; fn returns false to stop. A delimiter change that names fewer
// than two delimiters ends the walk after fn has seen it: pystache fails
// there.
func scanTags(src string, fn func(tag) bool) {
	otag, ctag := "{{", "}}"
	skipped := false
	for pos := 0; pos < len(src); {
		i := strings.Index(src[pos:], otag)
		if i < 0 {
			return
		}
		at := pos + i
		t, ok := plainTag(src, at, otag, ctag)
		if !ok {
			t, ok = patternTag(src, at, otag, ctag)
		}
		if !ok {
			pos, skipped = at+1, true // text: the regular expression searches on
			continue
		}
		t.skipped, skipped = skipped, false
		if t.kind == '=' {
			if f := strings.FieldsFunc(t.name, pystr.IsSpace); len(f) >= 2 {
				otag, ctag, t.delimsOK = f[0], f[1], true
			}
		}
		t.otag, t.ctag = otag, ctag
		if !fn(t) || t.kind == '=' && !t.delimsOK {
			return
		}
		pos = t.end
	}
}

// plainTag reads the common tag the way the regular expression would,
// without it: a key that is not empty ends at the first closing
// delimiter. It declines ("=", "{", nothing before the closing
// delimiter) where the expression may backtrack into another reading,
// and where the library would read the tag otherwise (the separators
// U+001C to U+001F, white space to Python, not to Go's TrimSpace).
func plainTag(src string, at int, otag, ctag string) (tag, bool) {
	q := at + len(otag)
	k := skipPySpace(src, q)
	if k >= len(src) || src[k] == '=' || src[k] == '{' {
		return tag{}, false
	}
	t := tag{start: at}
	if strings.IndexByte("!>&/#^", src[k]) >= 0 {
		t.kind = src[k]
		k = skipPySpace(src, k+1)
	}
	e := strings.Index(src[q:], ctag)
	if e < 0 || q+e <= k {
		return tag{}, false
	}
	for i := q; i < q+e; i++ {
		if src[i] >= 0x1c && src[i] <= 0x1f {
			return tag{}, false
		}
	}
	t.name = src[k : q+e]
	if n := len(t.name); n == 0 || t.name[n-1] >= utf8.RuneSelf || pystr.IsSpace(rune(t.name[n-1])) {
		t.name = strings.TrimRightFunc(t.name, pystr.IsSpace) // not the common case
	}
	t.end = q + e + len(ctag)
	t.plain = true
	return t, true
}

func skipPySpace(src string, i int) int {
	for i < len(src) {
		if c := src[i]; c < utf8.RuneSelf {
			if c != ' ' && (c < '\t' || c > '\r') && (c < 0x1c || c > 0x1f) {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if !pystr.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// patternTag reads the tag at an opening delimiter with pystache's
// expression itself.
func patternTag(src string, at int, otag, ctag string) (tag, bool) {
	if !strings.Contains(src[at+len(otag):], ctag) {
		return tag{}, false // no key can end: spare the expression the scan
	}
	re := tagPattern(otag, ctag)
	if re == nil {
		return tag{}, false
	}
	m := re.FindStringSubmatchIndex(src[at:])
	if m == nil {
		return tag{}, false
	}
	group := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return src[at+m[2*i] : at+m[2*i+1]]
	}
	t := tag{start: at, end: at + m[1]}
	switch {
	case m[2] >= 0:
		t.kind, t.name = '=', group(2)
	case m[6] >= 0:
		t.kind, t.name = '{', group(4)
	default:
		if sigil := group(5); sigil != "" {
			t.kind = sigil[0]
		}
		t.name = group(6)
	}
	return t, true
}

// libraryTag is how the mustache library reads the tag whose opening
// delimiter otag is at start (its readTag and parse): up to the first
// closing delimiter ("}" and it for a "{"), the text trimmed, its first
// byte the kind. ok is false where the library fails (no closing
// delimiter, an empty tag), which it reports itself.
func libraryTag(src string, start int, otag, ctag string) (t tag, ok bool) {
	q := start + len(otag)
	var text string
	if q < len(src) && src[q] == '{' {
		i := strings.Index(src[q:], "}"+ctag)
		if i < 0 {
			return t, false
		}
		text, t.end = src[q:q+i+1], q+i+1+len(ctag)
	} else {
		i := strings.Index(src[q:], ctag)
		if i < 0 {
			return t, false
		}
		text, t.end = src[q:q+i], q+i+len(ctag)
	}
	body := strings.TrimSpace(text)
	if body == "" {
		return t, false
	}
	t.start, t.otag, t.ctag = start, otag, ctag
	switch c := body[0]; c {
	case '!', '#', '^', '/', '>', '&':
		t.kind, t.name = c, strings.TrimSpace(body[1:])
	case '{':
		// Without the closing brace the library renders nothing.
		if len(body) < 2 || body[len(body)-1] != '}' {
			t.kind = '?'
		} else {
			t.kind, t.name = '{', strings.TrimSpace(body[1:len(body)-1])
		}
	case '=':
		// parseCustomDelimiter: a failed change is a variable to the
		// library, but still a tag that may stand alone on its line.
		t.kind = '?'
		if len(body) >= 3 && body[len(body)-1] == '=' {
			if o, c, found := strings.Cut(strings.TrimSpace(body[1:len(body)-1]), " "); found {
				t.kind, t.name, t.otag, t.ctag, t.delimsOK = '=', o+" "+c, o, c, true
			}
		}
	default:
		t.name = body
	}
	return t, true
}

// tagError is a tag that pystache reads otherwise than the library would
// (another extent, kind, key or delimiters), so that no rendering of it
// can be pystache's: for example a tag without a key ("{{#}}", which
// pystache reads as the variable "#", or as a section reaching to a
// later closing delimiter), an empty comment, white space pystache skips
// and the library does not, a delimiter change that does not set two
// delimiters. Such a template is refused.
type tagError struct {
	line int
	tag  string
}

func (e tagError) Error() string {
	return fmt.Sprintf("line %d: tag %q is read otherwise by pystache", e.line, e.tag)
}

// checkTags walks the tags of src as pystache and as the library read
// them, side by side, and returns a tagError for the first tag they read
// differently. Where the library fails to read a tag it is left to
// report that.
func checkTags(src string) error {
	var tags []tag
	scanTags(src, func(t tag) bool { tags = append(tags, t); return true })
	var err error
	libPos, libO, libC := 0, "{{", "}}"
	fail := func(start, end int) {
		err = tagError{line: strings.Count(src[:start], "\n") + 1, tag: src[start:min(end, len(src))]}
	}
	for _, t := range tags {
		i := strings.Index(src[libPos:], libO)
		if i < 0 {
			fail(t.start, t.end)
			return err
		}
		if libPos+i != t.start {
			// One of them takes an opening delimiter for text.
			if lt, ok := libraryTag(src, libPos+i, libO, libC); ok {
				fail(min(t.start, lt.start), max(t.end, lt.end))
			}
			return err
		}
		lt, ok := libraryTag(src, t.start, libO, libC)
		if !ok {
			return nil
		}
		same := lt.end == t.end && lt.kind == t.kind
		switch t.kind {
		case '!', '>':
			// Their keys do not matter: comments and partials render
			// nothing.
		case '=':
			same = same && t.delimsOK && lt.otag == t.otag && lt.ctag == t.ctag
		default:
			same = same && lt.name == t.name
		}
		if !same {
			fail(t.start, max(t.end, lt.end))
			return err
		}
		libPos, libO, libC = lt.end, lt.otag, lt.ctag
	}
	if i := strings.Index(src[libPos:], libO); i >= 0 {
		// Text to pystache, a tag to the library.
		if lt, ok := libraryTag(src, libPos+i, libO, libC); ok {
			fail(lt.start, lt.end)
		}
	}
	return err
}

// standaloneMarker is a variable name that renders nothing: the library
// splits it into "" and ".", finds a dict's ref under "" (or nothing, for
// empty metadata), and a bare ref prints nothing (see view.go).
const standaloneMarker = ".."

// matchPystacheStandalone makes the library agree with pystache 0.6 on
// standalone lines. Both drop a line holding only a section, inverted,
// closing, comment, partial or delimiter tag (plus indentation), but the
// library, following the mustache spec, also drops it when blanks follow
// the tag, and pystache does not; and the library drops a line holding
// only a variable whose key starts with "<", which pystache keeps. After
// such a tag an empty variable tag is inserted, so the library no longer
// sees the line as standalone.
//
// alike reports, on the way, whether the library is sure to read every
// tag as pystache does: each is plain, and no opening delimiter is text
// to pystache. It is the common case, and spares checkTags.
func matchPystacheStandalone(src string) (marked string, alike bool) {
	var out strings.Builder
	last := 0
	alike = true
	next, otag := 0, "{{"
	scanTags(src, func(t tag) bool {
		alike = alike && t.plain && !t.skipped
		next, otag = t.end, t.otag
		if !beginsLine(src, t.start) {
			return true
		}
		rest := t.end
		for rest < len(src) && (src[rest] == ' ' || src[rest] == '\t') {
			rest++
		}
		switch {
		case t.kind == 0 && strings.HasPrefix(t.name, "<"):
			if rest < len(src) && src[rest] != '\n' {
				return true // text follows: standalone to neither
			}
		case t.kind != 0 && strings.IndexByte("#^/!>=", t.kind) >= 0:
			if rest == t.end || (rest < len(src) && src[rest] != '\n') {
				return true // ends the line (both agree) or text follows (neither)
			}
		default:
			return true
		}
		if last == 0 {
			// Once, to the size of a few markers more: the text is
			// copied whole, and growing by doubling would copy it again.
			out.Grow(len(src) + 128)
		}
		out.WriteString(src[last:t.end])
		out.WriteString(t.otag + "&" + standaloneMarker + t.ctag)
		last = t.end
		return true
	})
	alike = alike && !strings.Contains(src[next:], otag)
	if last == 0 {
		return src, alike
	}
	out.WriteString(src[last:])
	return out.String(), alike
}

func beginsLine(src string, i int) bool {
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return i == 0 || src[i-1] == '\n'
}

// firstMismatch returns the first closing tag that does not close the
// innermost open section, and that section ("None" at top level).
func firstMismatch(src string) (closing, open string, ok bool) {
	var stack []string
	scanTags(src, func(t tag) bool {
		switch t.kind {
		case '#', '^':
			stack = append(stack, t.name)
		case '/':
			switch {
			case len(stack) == 0:
				closing, open, ok = t.name, "None", true
			case stack[len(stack)-1] != t.name:
				closing, open, ok = t.name, stack[len(stack)-1], true
			default:
				stack = stack[:len(stack)-1]
			}
		}
		return !ok
	})
	return closing, open, ok
}
