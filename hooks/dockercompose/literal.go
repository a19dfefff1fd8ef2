package dockercompose

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

// maxLiteralDepth bounds the nesting of a literal, as Python's parser
// bounds it (an env_files value is two levels deep).
const maxLiteralDepth = 100

// literalEval reads a Python literal as ast.literal_eval does, for the
// values an env_files input holds: Heat passes a list input to a String
// input as Python's repr ([{'file_name': ..., 'content': ...}]) and
// templates write it as JSON. Lists, tuples (as lists), dicts with
// string keys, strings, integers, floats, True, False and None.
func literalEval(s string) (jsondoc.Value, error) {
	p := &litParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %q", p.s[p.i:min(p.i+10, len(p.s))])
	}
	return v, nil
}

type litParser struct {
	s string
	i int
}

func (p *litParser) errorf(format string, args ...any) error {
	return fmt.Errorf("not a Python literal at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *litParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *litParser) value(depth int) (jsondoc.Value, error) {
	if depth > maxLiteralDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '[' || c == '(':
		closer := map[byte]byte{'[': ']', '(': ')'}[c]
		p.i++
		var list []jsondoc.Value
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == closer {
				p.i++
				return append([]jsondoc.Value{}, list...), nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			if err := p.separator(closer); err != nil {
				return nil, err
			}
		}
	case c == '{':
		p.i++
		obj := jsondoc.NewObject(0)
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return obj, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, p.errorf("a dict key that is not a string")
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errorf("expected ':'")
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj.Set(ks, v)
			if err := p.separator('}'); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		return p.str()
	}
	word := p.word()
	switch word {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	case "":
		return nil, p.errorf("unexpected %q", p.s[p.i:p.i+1])
	}
	if _, err := strconv.ParseInt(word, 10, 64); err == nil {
		return jsondoc.Number{Text: word}, nil
	}
	if f, err := strconv.ParseFloat(word, 64); err == nil {
		return jsondoc.Float(f), nil
	}
	return nil, p.errorf("unexpected %q", word)
}

// separator takes the ',' after an item, or sees the closer.
func (p *litParser) separator(closer byte) error {
	p.space()
	switch {
	case p.i < len(p.s) && p.s[p.i] == ',':
		p.i++
		return nil
	case p.i < len(p.s) && p.s[p.i] == closer:
		return nil
	}
	return p.errorf("expected ',' or %q", closer)
}

func (p *litParser) word() string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n,:[](){}'\"", p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

var simpleEscapes = map[byte]string{
	'\\': "\\", '\'': "'", '"': "\"", 'n': "\n", 't': "\t", 'r': "\r", 'a': "\a", 'b': "\b", 'f': "\f", 'v': "\v", '0': "\x00", '\n': "",
}

// str reads a quoted string with Python's escapes (\xhh, \uXXXX,
// \UXXXXXXXX and the one-letter ones); an unknown escape stays as it is.
func (p *litParser) str() (string, error) {
	q := p.s[p.i]
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.errorf("unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\n':
			return "", p.errorf("line break in a string")
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", p.errorf("unterminated string")
		}
		e := p.s[p.i+1]
		if r, ok := simpleEscapes[e]; ok {
			b.WriteString(r)
			p.i += 2
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
		if width == 0 {
			b.WriteString(p.s[p.i : p.i+2])
			p.i += 2
			continue
		}
		hex := p.s[p.i+2 : min(p.i+2+width, len(p.s))]
		n, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || len(hex) != width || n > utf8.MaxRune {
			return "", p.errorf("bad \\%c escape", e)
		}
		b.WriteRune(rune(n))
		p.i += 2 + width
	}
}

var errNotList = errors.New("env_files is not a list of {file_name, content} dicts")
