package render

import "strings"

// tag is one mustache tag as pystache's parser finds it.
type tag struct {
	start, end int    // byte offsets of the tag, delimiters included
	kind       byte   // '#', '^', '/', '!', '>', '=', '&', '{' or 0 for a variable
	name       string // trimmed
	otag, ctag string // delimiters in force after this tag
}

// scanTags walks the tags of src as pystache's regular expression does
// (whitespace allowed after the opening delimiter, the first closing
// delimiter ends the tag, "{{=a b=}}" changes the delimiters) and calls fn
// for each; fn returns false to stop. Text that pystache would not read as
// a tag is skipped, as pystache leaves it as text.
func scanTags(src string, fn func(tag) bool) {
	otag, ctag := "{{", "}}"
	pos := 0
	for pos < len(src) {
		i := strings.Index(src[pos:], otag)
		if i < 0 {
			return
		}
		start := pos + i
		k := start + len(otag)
		for k < len(src) && isBlank(src[k]) {
			k++
		}
		if k >= len(src) {
			return
		}
		t := tag{start: start}
		closeAt := -1
		switch c := src[k]; c {
		case '{':
			t.kind = '{'
			if j := strings.Index(src[k+1:], "}"); j > 0 {
				if m := strings.Index(src[k+1+j+1:], ctag); m >= 0 && strings.TrimSpace(src[k+1+j+1:k+1+j+1+m]) == "" {
					t.name = strings.TrimSpace(src[k+1 : k+1+j])
					closeAt = k + 1 + j + 1 + m
				}
			}
		case '#', '^', '/', '!', '>', '&', '=':
			t.kind = c
			if j := strings.Index(src[k+1:], ctag); j >= 0 {
				t.name = strings.TrimSpace(src[k+1 : k+1+j])
				closeAt = k + 1 + j
			}
		default:
			if j := strings.Index(src[k+1:], ctag); j >= 0 {
				t.name = strings.TrimSpace(src[k : k+1+j])
				closeAt = k + 1 + j
			}
		}
		if closeAt < 0 {
			pos = start + len(otag) // not a tag: literal text
			continue
		}
		t.end = closeAt + len(ctag)
		if t.kind == '=' {
			if f := strings.Fields(strings.TrimSuffix(t.name, "=")); len(f) == 2 {
				otag, ctag = f[0], f[1]
			}
		}
		t.otag, t.ctag = otag, ctag
		if !fn(t) {
			return
		}
		pos = t.end
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// standaloneMarker is a variable name that renders nothing: the library
// splits it into "" and ".", finds a dict's ref under "" (or nothing, for
// empty metadata), and a bare ref prints nothing (see view.go).
const standaloneMarker = ".."

// matchPystacheStandalone makes the library agree with pystache 0.6 on
// standalone lines. Both drop a line holding only a section, inverted,
// closing, comment, partial or delimiter tag (plus indentation), but the
// library, following the mustache spec, also drops it when blanks follow
// the tag, and pystache does not. After such a tag an empty variable tag is
// inserted, so the library no longer sees the line as standalone.
func matchPystacheStandalone(src string) string {
	var out strings.Builder
	last := 0
	scanTags(src, func(t tag) bool {
		switch t.kind {
		case '#', '^', '/', '!', '>', '=':
		default:
			return true
		}
		if !beginsLine(src, t.start) {
			return true
		}
		rest := t.end
		for rest < len(src) && (src[rest] == ' ' || src[rest] == '\t') {
			rest++
		}
		if rest == t.end || (rest < len(src) && src[rest] != '\n') {
			return true // ends the line (both agree) or text follows (neither)
		}
		out.WriteString(src[last:t.end])
		out.WriteString(t.otag + "&" + standaloneMarker + t.ctag)
		last = t.end
		return true
	})
	if last == 0 {
		return src
	}
	out.WriteString(src[last:])
	return out.String()
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
