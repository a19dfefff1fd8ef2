// Writing: JSON values as PyYAML's yaml.safe_dump does with its
// defaults (block style, keys sorted, two-space indent, lines folded past
// 80 columns, non-ASCII escaped), byte for byte: the salt hook's results
// and docker-compose.yml are that text in the reference. It follows
// PyYAML's emitter for the subset a JSON value needs (no anchors, tags or
// flow collections but the empty ones).

package pyyaml

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tripleo-go/agent/internal/jsondoc"
)

const (
	bestIndent = 2
	bestWidth  = 80
	// maxSimpleKey: a key of this many characters or more (with the
	// "!!str" PyYAML counts) is written as "? key".
	maxSimpleKey = 128 - len("!!str")
)

// Dump is yaml.safe_dump(v) (default_flow_style=False, the default since
// PyYAML 5.1): one document, ending with a newline.
func Dump(v jsondoc.Value) string {
	e := &emitter{indent: -1, whitespace: true, indention: true}
	e.node(v, ctx{root: true})
	e.writeIndent() // the document's end
	if e.openEnded {
		e.writeIndicator("...", true, false, false)
		e.writeIndent()
	}
	return e.b.String()
}

type ctx struct{ root, sequence, mapping, simpleKey bool }

type emitter struct {
	b                     strings.Builder
	indent                int // -1: none yet
	indents               []int
	column                int
	whitespace, indention bool
	openEnded             bool
	ctx                   ctx
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = bestIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *emitter) node(v jsondoc.Value, c ctx) {
	e.ctx = c
	switch x := v.(type) {
	case *jsondoc.Object:
		if x.Len() == 0 {
			e.writeIndicator("{", true, true, false)
			e.writeIndicator("}", false, false, false)
			return
		}
		e.blockMapping(x)
	case []jsondoc.Value:
		if len(x) == 0 {
			e.writeIndicator("[", true, true, false)
			e.writeIndicator("]", false, false, false)
			return
		}
		e.blockSequence(x)
	default:
		text, plainOK := scalarText(v)
		e.increaseIndent(true, false)
		e.scalar(text, plainOK)
		e.popIndent()
	}
}

func (e *emitter) blockSequence(items []jsondoc.Value) {
	e.increaseIndent(false, e.ctx.mapping && !e.indention)
	for _, item := range items {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(item, ctx{sequence: true})
	}
	e.popIndent()
}

func (e *emitter) blockMapping(o *jsondoc.Object) {
	e.increaseIndent(false, false)
	keys := slices.Clone(o.Keys())
	slices.Sort(keys)
	for _, k := range keys {
		v, _ := o.Get(k)
		e.writeIndent()
		if k != "" && !strings.ContainsAny(k, "\n\u0085\u2028\u2029") && len([]rune(k)) < maxSimpleKey {
			e.node(k, ctx{mapping: true, simpleKey: true})
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			e.node(k, ctx{mapping: true})
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		e.node(v, ctx{mapping: true})
	}
	e.popIndent()
}

// scalarText is a non-string value's text, or a string, and whether it may
// be written plain (it reads back as what it is).
func scalarText(v jsondoc.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case jsondoc.Number:
		if !x.IsFloat {
			return x.Text, true
		}
		switch f := x.Float; {
		case math.IsNaN(f):
			return ".nan", true
		case math.IsInf(f, 1):
			return ".inf", true
		case math.IsInf(f, -1):
			return "-.inf", true
		}
		s := strings.ToLower(x.Text)
		if !strings.Contains(s, ".") && strings.Contains(s, "e") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s, true
	case string:
		return x, !resolvesAsOther(x)
	default:
		return fmt.Sprint(x), false
	}
}

// PyYAML's implicit resolvers (YAML 1.1): a string that reads back as
// another type must be quoted.
var implicit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:` +
		`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
		`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
		`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
		`|<<|~|null|Null|NULL|=` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
		`)$`)
})

// resolvesAsOther: as PyYAML, only strings starting with one of the
// resolvers' first characters are tried (the regexp is the slow part).
func resolvesAsOther(s string) bool {
	return s == "" || strings.IndexByte("yYnNtTfFoO-+0123456789.<~=", s[0]) >= 0 && implicit().MatchString(s)
}

func (e *emitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.column += len(ind)
	e.openEnded = false
	e.b.WriteString(ind)
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak()
	}
	if e.column < indent {
		e.whitespace = true
		e.b.WriteString(strings.Repeat(" ", indent-e.column))
		e.column = indent
	}
}

func (e *emitter) writeLineBreak() { e.writeBreak('\n') }

func (e *emitter) writeBreak(r rune) {
	e.whitespace, e.indention = true, true
	e.column = 0
	e.b.WriteRune(r)
}

func (e *emitter) write(rs []rune) {
	e.column += len(rs)
	e.b.WriteString(string(rs))
}
