// Package pyyaml reads YAML as PyYAML's yaml.safe_load does: one
// document, YAML 1.1 scalar meaning ("0644" is octal, "yes" and "off"
// are booleans), merge keys, and its safe loader's tags only.
package pyyaml

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/tripleo-go/agent/internal/jsondoc"
	"github.com/tripleo-go/agent/internal/pystr"
)

// YAML 1.1's implicit scalar types, as PyYAML's resolver spells them.
var (
	yaml11Bool = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	})
	yaml11Int = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	yaml11Float = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
	yaml11Null = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:~|null|Null|NULL|)$`) })
)

// Error is YAML that safe_load refuses; the message starts "invalid YAML: ".
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// SafeLoad decodes one YAML document into JSON-like values with YAML 1.1
// scalar meaning; an empty document is nil. yaml.v3 does the syntax; the
// scalars are resolved here because yaml.v3 follows YAML 1.2 (where 0644
// is decimal).
func SafeLoad(data []byte) (jsondoc.Value, error) {
	invalid := func(err error) error {
		return &Error{Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, invalid(err)
	}
	// One document, as PyYAML's safe_load wants: yaml.v3 would
	// otherwise drop what follows the first (even text after a comment
	// line, "no\n#\nmode: 0600").
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == io.EOF:
	case err != nil:
		return nil, invalid(err)
	default:
		return nil, &Error{Msg: "invalid YAML: expected a single document in the stream"}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return convert(doc.Content[0], 0)
}

const maxYAMLDepth = 100

func convert(n *yaml.Node, depth int) (jsondoc.Value, error) {
	if depth > maxYAMLDepth {
		return nil, &Error{Msg: "invalid YAML: nested too deeply"}
	}
	if err := checkTag(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		return convert(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return convert(n.Content[0], depth+1)
	case yaml.SequenceNode:
		out := make([]jsondoc.Value, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		pairs, err := flatten(n, depth)
		if err != nil {
			return nil, err
		}
		obj := jsondoc.NewObject(len(pairs) / 2)
		for i := 0; i+1 < len(pairs); i += 2 {
			k, err := convert(pairs[i], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := convert(pairs[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			obj.Set(jsondoc.PyStr(k), v) // duplicate keys: the last value wins
		}
		return obj, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, &Error{Msg: fmt.Sprintf("invalid YAML: unexpected node kind %d", n.Kind)}
}

// flatten is a mapping's key and value nodes with its merge keys ("<<:
// *defaults") resolved as PyYAML's flatten_mapping does: the merged
// mappings' pairs first (of a list of them, the first wins), then the
// mapping's own.
func flatten(n *yaml.Node, depth int) ([]*yaml.Node, error) {
	if depth > maxYAMLDepth {
		return nil, &Error{Msg: "invalid YAML: nested too deeply"}
	}
	var merged, own []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, k, v)
			continue
		}
		v = unalias(v)
		var subs []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			subs = []*yaml.Node{v}
		case yaml.SequenceNode:
			for j := len(v.Content) - 1; j >= 0; j-- {
				subs = append(subs, unalias(v.Content[j]))
			}
		}
		if len(subs) == 0 && v.Kind != yaml.SequenceNode {
			return nil, &Error{Msg: "invalid YAML: a merge key (<<) wants a mapping or a list of mappings"}
		}
		for _, sub := range subs {
			if sub.Kind != yaml.MappingNode {
				return nil, &Error{Msg: "invalid YAML: a merge key (<<) wants a mapping or a list of mappings"}
			}
			pairs, err := flatten(sub, depth+1)
			if err != nil {
				return nil, err
			}
			merged = append(merged, pairs...)
		}
	}
	return append(merged, own...), nil
}

func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i <= maxYAMLDepth; i++ {
		n = n.Alias
	}
	return n
}

// checkTag refuses an explicit tag that PyYAML's safe loader has no
// constructor for, as it does, and the ones it builds Python types from
// that JSON has no place for (sets, ordered pairs, bytes).
func checkTag(n *yaml.Node) error {
	if n.Style&yaml.TaggedStyle == 0 {
		return nil
	}
	known := map[yaml.Kind]string{
		yaml.ScalarNode:   " !!str !!null !!bool !!int !!float !!timestamp !!merge ",
		yaml.MappingNode:  " !!map ",
		yaml.SequenceNode: " !!seq ",
	}[n.Kind]
	switch {
	case strings.Contains(known, " "+n.Tag+" "):
		return nil
	case n.Tag == "!!set" || n.Tag == "!!omap" || n.Tag == "!!pairs" || n.Tag == "!!binary":
		return &Error{Msg: fmt.Sprintf("invalid YAML: %s is not supported", n.Tag)}
	}
	return &Error{Msg: fmt.Sprintf("invalid YAML: could not determine a constructor for the tag %q", n.Tag)}
}

func scalar(n *yaml.Node) (jsondoc.Value, error) {
	if n.Style&yaml.TaggedStyle != 0 {
		// An explicit tag: PyYAML's constructor for it, whatever the
		// text looks like ("!!float 1" is 1.0, "!!null x" is None).
		var v jsondoc.Value
		ok := true
		switch n.Tag {
		case "!!str":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool":
			v, ok = yaml11Bools[strings.ToLower(n.Value)]
		case "!!int":
			var i *big.Int
			if i, ok = constructInt(n.Value); ok {
				v = jsondoc.Number{Text: i.String()}
			}
		case "!!float":
			var f float64
			if f, ok = constructFloat(n.Value); ok {
				v = jsondoc.Float(f)
			}
		default: // !!timestamp: read as text (docs/compat.md)
			return n.Value, nil
		}
		if !ok {
			return nil, &Error{Msg: fmt.Sprintf("invalid YAML: cannot read %q as %s", n.Value, n.Tag)}
		}
		return v, nil
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value, nil
	}
	return plain(n.Value), nil
}

var yaml11Bools = map[string]jsondoc.Value{"yes": true, "no": false, "true": true, "false": false, "on": true, "off": false}

// plain resolves an untagged plain scalar as PyYAML does: its resolver's
// expressions pick the type, its constructor makes the value.
func plain(s string) jsondoc.Value {
	switch {
	case yaml11Null().MatchString(s):
		return nil
	case yaml11Bool().MatchString(s):
		return yaml11Bools[strings.ToLower(s)]
	case yaml11Int().MatchString(s):
		if i, ok := constructInt(s); ok {
			return jsondoc.Number{Text: i.String()}
		}
	case yaml11Float().MatchString(s):
		if f, ok := constructFloat(s); ok {
			return jsondoc.Float(f)
		}
	}
	return s
}

// constructInt is PyYAML's construct_yaml_int: underscores dropped, a
// sign, then 0b binary, 0x hex, a leading 0 octal (Python's int(s, 8),
// which also takes an "0o"), a:b:c sexagesimal, else decimal. false
// where PyYAML fails with a traceback.
func constructInt(s string) (*big.Int, bool) {
	s = strings.ReplaceAll(s, "_", "")
	if s == "" {
		return nil, false
	}
	neg := s[0] == '-'
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	var i *big.Int
	ok := true
	switch {
	case s == "0":
		i = new(big.Int)
	case strings.HasPrefix(s, "0b"):
		i, ok = pythonInt(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		i, ok = pythonInt(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		i, ok = pythonInt(s, 8)
	case strings.Contains(s, ":"):
		i = new(big.Int)
		for _, part := range strings.Split(s, ":") {
			d, dok := pythonInt(part, 10)
			if !dok {
				return nil, false
			}
			i.Mul(i, big.NewInt(60))
			i.Add(i, d)
		}
	default:
		i, ok = pythonInt(s, 10)
	}
	if !ok {
		return nil, false
	}
	if neg {
		i.Neg(i)
	}
	return i, true
}

// pythonInt is Python's int(s, base) on ASCII text: white space around,
// a sign, the base's prefix (0b, 0o, 0x, any case), digits.
func pythonInt(s string, base int) (*big.Int, bool) {
	s = strings.TrimFunc(s, pystr.IsSpace)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) > 2 && s[0] == '0' {
		if p := strings.ToLower(s[1:2]); p == "b" && base == 2 || p == "o" && base == 8 || p == "x" && base == 16 {
			s = s[2:]
		}
	}
	if s == "" || strings.ContainsAny(s, "+-_") {
		return nil, false
	}
	i, ok := new(big.Int).SetString(s, base)
	if ok && neg {
		i.Neg(i)
	}
	return i, ok
}

// constructFloat is PyYAML's construct_yaml_float: underscores dropped,
// lower case, a sign, .inf, .nan, a:b:c sexagesimal, else Python's
// float(). false where PyYAML fails with a traceback.
func constructFloat(s string) (float64, bool) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	if s == "" {
		return 0, false
	}
	sign := 1.0
	if s[0] == '-' {
		sign = -1
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1), true
	case s == ".nan":
		return math.NaN(), true
	case strings.Contains(s, ":"):
		f := 0.0
		for _, part := range strings.Split(s, ":") {
			d, ok := pythonFloat(part)
			if !ok {
				return 0, false
			}
			f = f*60 + d
		}
		return sign * f, true
	}
	f, ok := pythonFloat(s)
	return sign * f, ok
}

// pythonFloat is Python's float(s) on ASCII text: white space around, a
// decimal number (out of range is ±inf), inf, infinity or nan.
func pythonFloat(s string) (float64, bool) {
	s = strings.TrimFunc(s, pystr.IsSpace)
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || strings.ContainsAny(body, "xXpP_") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}
