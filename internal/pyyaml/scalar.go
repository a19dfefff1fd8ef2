package pyyaml

import (
	"fmt"
	"strings"
)

// analysis is what PyYAML's analyze_scalar finds in a scalar: which
// styles can write it.
type analysis struct {
	empty, multiline                                bool
	flowPlain, blockPlain, singleQuoted, blockStyle bool
}

func isBreak(r rune) bool { return r == '\n' || r == '\u0085' || r == '\u2028' || r == '\u2029' }

func isSpaceOrEnd(r rune) bool { return r == 0 || r == ' ' || r == '\t' || r == '\r' || isBreak(r) }

func analyze(s []rune) analysis {
	if len(s) == 0 {
		return analysis{empty: true, blockPlain: true, singleQuoted: true}
	}
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	str := string(s)
	if strings.HasPrefix(str, "---") || strings.HasPrefix(str, "...") {
		blockInd, flowInd = true, true
	}
	precededByWS := true
	followedByWS := len(s) == 1 || isSpaceOrEnd(s[1])
	prevSpace, prevBreak := false, false
	for i, ch := range s {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				flowInd, blockInd = true, true
			}
			if ch == '?' || ch == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if ch == '-' && followedByWS {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", ch) {
				flowInd = true
			}
			if ch == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if ch == '#' && precededByWS {
				flowInd, blockInd = true, true
			}
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || ch >= 0x20 && ch <= 0x7e) {
			// allow_unicode is off: anything else is special.
			special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(s)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(s)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = isSpaceOrEnd(ch)
		followedByWS = i+2 >= len(s) || isSpaceOrEnd(s[i+2])
	}
	a := analysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, blockStyle: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if trailingSpace {
		a.blockStyle = false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.singleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.singleQuoted, a.blockStyle = false, false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// scalar writes text in the style PyYAML chooses (block context: no
// flow collection ever holds a scalar here).
func (e *emitter) scalar(text string, plainOK bool) {
	s := []rune(text)
	a := analyze(s)
	split := !e.ctx.simpleKey
	switch {
	case plainOK && !(e.ctx.simpleKey && (a.empty || a.multiline)) && a.blockPlain:
		e.writePlain(s, split)
	case a.singleQuoted && !(e.ctx.simpleKey && a.multiline):
		e.writeSingleQuoted(s, split)
	default:
		e.writeDoubleQuoted(s, split)
	}
}

func (e *emitter) writePlain(s []rune, split bool) {
	if e.ctx.root {
		e.openEnded = true
	}
	if len(s) == 0 {
		return
	}
	if !e.whitespace {
		e.write([]rune{' '})
	}
	e.whitespace, e.indention = false, false
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
					e.write(s[start:end])
				}
				start = end
			}
		} else if ch == -1 || ch == ' ' || isBreak(ch) {
			e.write(s[start:end])
			start = end
		}
		if ch != -1 {
			spaces = ch == ' '
		}
	}
}

func (e *emitter) writeBreaks(s []rune) {
	if s[0] == '\n' {
		e.writeLineBreak()
	}
	for _, br := range s {
		e.writeBreak(br)
	}
	e.writeIndent()
}

func (e *emitter) writeSingleQuoted(s []rune, split bool) {
	e.writeIndicator("'", true, false, false)
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
					e.write(s[start:end])
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				e.writeBreaks(s[start:end])
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) || ch == '\'' {
				if start < end {
					e.write(s[start:end])
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write([]rune("''"))
			start = end + 1
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', isBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

var escapes = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f", 0x0d: "r", 0x1b: "e",
	'"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P",
}

func (e *emitter) writeDoubleQuoted(s []rune, split bool) {
	e.writeIndicator("\"", true, false, false)
	start := 0
	for end := 0; end <= len(s); end++ {
		var ch rune = -1
		if end < len(s) {
			ch = s[end]
		}
		if ch == -1 || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xfeff || ch < 0x20 || ch > 0x7e {
			if start < end {
				e.write(s[start:end])
				start = end
			}
			if ch != -1 {
				var esc string
				switch r, ok := escapes[ch]; {
				case ok:
					esc = "\\" + r
				case ch <= 0xff:
					esc = fmt.Sprintf("\\x%02X", ch)
				case ch <= 0xffff:
					esc = fmt.Sprintf("\\u%04X", ch)
				default:
					esc = fmt.Sprintf("\\U%08X", ch)
				}
				e.write([]rune(esc))
				start = end + 1
			}
		}
		if 0 < end && end < len(s)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > bestWidth && split {
			var data []rune
			if start < end {
				data = append(data, s[start:end]...)
			}
			data = append(data, '\\')
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if s[start] == ' ' {
				e.write([]rune{'\\'})
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}
