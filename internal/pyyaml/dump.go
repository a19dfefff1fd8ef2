// Writing: JSON-like values as PyYAML's
// yaml.safe_dump(data, default_flow_style=False) does, byte for byte:
// block style, keys sorted, 2-space indent, sequences in a mapping not
// indented, empty collections as [] and {}, strings plain when PyYAML
// would read them back as strings, else quoted as its emitter chooses,
// lines folded past 80 columns, non-ASCII escaped. Files a reference
// program wrote with it (docker-compose.yml) stay the same files.

package pyyaml

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tripleo-go/agent/internal/pyjson"
)

const (
	bestIndent = 2
	bestWidth  = 80
	noIndent   = -1
)

// Dump is yaml.safe_dump(v, default_flow_style=False).
func Dump(v pyjson.Value) string {
	e := &emitter{indent: noIndent, whitespace: true, indention: true}
	e.node(v, true, false, false, false)
	e.writeIndent() // the document's end
	if e.openEnded {
		e.writeIndicator("...", true, false, false)
		e.writeIndent()
	}
	return e.b.String()
}

// emitter keeps the state PyYAML's Emitter keeps for the block styles.
type emitter struct {
	b                     strings.Builder
	column, indent        int
	indents               []int
	whitespace, indention bool
	openEnded             bool
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent == noIndent && flow:
		e.indent = bestIndent
	case e.indent == noIndent:
		e.indent = 0
	case !indentless:
		e.indent += bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *emitter) node(v pyjson.Value, root, sequence, mapping, simpleKey bool) {
	switch x := v.(type) {
	case []pyjson.Value:
		if len(x) == 0 {
			e.emptyFlow("[", "]")
			return
		}
		e.increaseIndent(false, mapping && !e.indention)
		for _, item := range x {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, true, false, false)
		}
		e.popIndent()
	case *pyjson.Object:
		if x.Len() == 0 {
			e.emptyFlow("{", "}")
			return
		}
		keys := slices.Clone(x.Keys())
		sort.Strings(keys)
		e.increaseIndent(false, false)
		for _, k := range keys {
			val, _ := x.Get(k)
			e.writeIndent()
			if a := analyze(k); len(k)+len("!!str") < 128 && !a.empty && !a.multiline {
				e.node(k, false, false, true, true)
				e.writeIndicator(":", false, false, false)
			} else {
				e.writeIndicator("?", true, false, true)
				e.node(k, false, false, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(val, false, false, true, false)
		}
		e.popIndent()
	default:
		e.increaseIndent(true, false)
		e.scalar(v, root, simpleKey)
		e.popIndent()
	}
}

func (e *emitter) emptyFlow(open, close string) {
	e.writeIndicator(open, true, true, false)
	e.increaseIndent(true, false)
	e.popIndent()
	e.writeIndicator(close, false, false, false)
}

// scalar writes a scalar in the style PyYAML's choose_scalar_style picks.
func (e *emitter) scalar(v pyjson.Value, root, simpleKey bool) {
	text, implicit := scalarText(v)
	a := analyze(text)
	split := !simpleKey
	switch {
	case implicit && !(simpleKey && (a.empty || a.multiline)) && a.allowBlockPlain:
		if root {
			e.openEnded = true
		}
		e.writePlain(text, split)
	case a.allowSingleQuoted && !(simpleKey && a.multiline):
		e.writeSingleQuoted(text, split)
	default:
		e.writeDoubleQuoted(text, split)
	}
}

// scalarText is how PyYAML's SafeRepresenter spells v, and whether its
// plain form reads back as the same type (a string that looks like a
// number, a boolean or null does not, and is quoted).
func scalarText(v pyjson.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case string:
		return x, !resolvesToOtherType(x)
	case pyjson.Number:
		if !x.IsFloat {
			return pyjson.Str(x), true
		}
		switch f := x.Float; {
		case math.IsNaN(f):
			return ".nan", true
		case math.IsInf(f, 1):
			return ".inf", true
		case math.IsInf(f, -1):
			return "-.inf", true
		}
		s := strings.ToLower(pyjson.FloatRepr(x.Float))
		if !strings.Contains(s, ".") && strings.Contains(s, "e") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s, true
	default:
		return fmt.Sprint(x), true
	}
}

// YAML 1.1's implicit types, as PyYAML's resolver has them.
var otherTypes = regexp.MustCompile(`^(?:` +
	`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` + // bool
	`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` + // int
	`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` + // float
	`|~|null|Null|NULL|` + // null
	`|[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?` + // timestamp
	`|<<|=` + // merge, value
	`)$`)

func resolvesToOtherType(s string) bool { return otherTypes.MatchString(s) }
