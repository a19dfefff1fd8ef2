package pyyaml

import (
	"fmt"
	"strings"
)

// analysis is PyYAML's ScalarAnalysis, for the styles used here.
type analysis struct {
	empty, multiline                   bool
	allowBlockPlain, allowSingleQuoted bool
}

func isBreak(r rune) bool { return r == '\n' || r == '\x85' || r == '\u2028' || r == '\u2029' }

func isSpaceOrEnd(r rune) bool { return r == 0 || r == ' ' || r == '\t' || r == '\r' || isBreak(r) }

// analyze is PyYAML's analyze_scalar with allow_unicode false: which
// styles may carry text unchanged.
func analyze(text string) analysis {
	if text == "" {
		return analysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	s := []rune(text)
	var blockIndicators, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(text, "---") || strings.HasPrefix(text, "...") {
		blockIndicators = true
	}
	precededByWS := true
	followedByWS := len(s) == 1 || isSpaceOrEnd(s[1])
	prevSpace, prevBreak := false, false
	for i, ch := range s {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				blockIndicators = true
			}
			if (ch == '?' || ch == ':' || ch == '-') && followedByWS {
				blockIndicators = true
			}
		} else if (ch == ':' && followedByWS) || (ch == '#' && precededByWS) {
			blockIndicators = true
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) {
			special = true // non-ASCII too: allow_unicode is false
		}
		switch {
		case ch == ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i == len(s)-1
			breakSpace = breakSpace || prevBreak
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i == len(s)-1
			spaceBreak = spaceBreak || prevSpace
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = isSpaceOrEnd(ch)
		followedByWS = i+2 >= len(s) || isSpaceOrEnd(s[i+2])
	}
	a := analysis{multiline: lineBreaks, allowBlockPlain: true, allowSingleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak || lineBreaks || blockIndicators {
		a.allowBlockPlain = false
	}
	if breakSpace || spaceBreak || special {
		a.allowBlockPlain, a.allowSingleQuoted = false, false
	}
	return a
}

func (e *emitter) write(s string) {
	e.b.WriteString(s)
	e.column += len([]rune(s))
}

func (e *emitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.openEnded = false
	e.write(ind)
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak("\n")
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *emitter) writeLineBreak(br string) {
	e.whitespace, e.indention = true, true
	e.b.WriteString(br)
	e.column = 0
}

// writePlain folds at a single space past the width.
func (e *emitter) writePlain(text string, split bool) {
	if text == "" {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	s := []rune(text)
	spaces := false
	start := 0
	for end := 0; end <= len(s); end++ {
		var ch rune = -1
		if end < len(s) {
			ch = s[end]
		}
		if spaces {
			if ch != ' ' {
				if start+1 == end && e.column > bestWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(s[start:end]))
				}
				start = end
			}
		} else if ch == -1 || ch == ' ' {
			e.write(string(s[start:end]))
			start = end
		}
		spaces = ch == ' '
	}
}

func (e *emitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	s := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(s); end++ {
		var ch rune = -1
		if end < len(s) {
			ch = s[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > bestWidth && split && start != 0 && end != len(s) {
					e.writeIndent()
				} else {
					e.write(string(s[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				if s[start] == '\n' {
					e.writeLineBreak("\n")
				}
				for _, br := range s[start:end] {
					e.writeLineBreak(string(br))
				}
				e.writeIndent()
				start = end
			}
		default:
			if (ch == -1 || ch == ' ' || isBreak(ch) || ch == '\'') && start < end {
				e.write(string(s[start:end]))
				start = end
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', isBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

var escapes = map[rune]string{
	0: "0", '\a': "a", '\b': "b", '\t': "t", '\n': "n", '\v': "v", '\f': "f", '\r': "r", 0x1b: "e",
	'"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P",
}

func (e *emitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	s := []rune(text)
	start := 0
	for end := 0; end <= len(s); end++ {
		var ch rune = -1
		if end < len(s) {
			ch = s[end]
		}
		if ch == -1 || strings.ContainsRune("\"\\\u0085\u2028\u2029\ufeff", ch) || ch < 0x20 || ch > 0x7e {
			if start < end {
				e.write(string(s[start:end]))
				start = end
			}
			if ch != -1 {
				var data string
				switch r, ok := escapes[ch]; {
				case ok:
					data = "\\" + r
				case ch <= 0xff:
					data = fmt.Sprintf("\\x%02X", ch)
				case ch <= 0xffff:
					data = fmt.Sprintf("\\u%04X", ch)
				default:
					data = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(data)
				start = end + 1
			}
		}
		if 0 < end && end < len(s)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > bestWidth && split {
			data := string(s[start:end]) + "\\"
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if s[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}
