package control

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tripleo-go/agent/internal/pyjson"
)

// YAML 1.1's implicit scalar types, as PyYAML's resolver spells them.
var (
	yaml11Bool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yaml11Int   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yaml11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yaml11Null  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// parseYAML11 decodes one YAML document into JSON-like values with YAML 1.1
// scalar meaning. yaml.v3 does the syntax; the scalars are resolved here
// because yaml.v3 follows YAML 1.2 (where 0644 is decimal).
func parseYAML11(data []byte) (pyjson.Value, error) {
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
	v, err := convert(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	if !pyjson.Truthy(v) { // the reference reads it as "safe_load(...) or {}"
		return nil, nil
	}
	return v, nil
}

const maxYAMLDepth = 100

func convert(n *yaml.Node, depth int) (pyjson.Value, error) {
	if depth > maxYAMLDepth {
		return nil, &Error{Msg: "invalid YAML: nested too deeply"}
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
		out := make([]pyjson.Value, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := convert(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		obj := pyjson.NewObject(len(n.Content) / 2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := convert(n.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := convert(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			obj.Set(pyjson.Str(k), v) // duplicate keys: the last value wins
		}
		return obj, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, &Error{Msg: fmt.Sprintf("invalid YAML: unexpected node kind %d", n.Kind)}
}

func scalar(n *yaml.Node) (pyjson.Value, error) {
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.Tag {
		case "!!str":
			return n.Value, nil
		case "!!int", "!!float", "!!bool", "!!null":
			v := plain(n.Value)
			if tagOf(v) != n.Tag {
				return nil, &Error{Msg: fmt.Sprintf("invalid YAML: cannot read %q as %s", n.Value, n.Tag)}
			}
			return v, nil
		}
		return n.Value, nil
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value, nil
	}
	return plain(n.Value), nil
}

func tagOf(v pyjson.Value) string {
	switch x := v.(type) {
	case nil:
		return "!!null"
	case bool:
		return "!!bool"
	case pyjson.Number:
		if x.IsFloat {
			return "!!float"
		}
		return "!!int"
	}
	return "!!str"
}

// plain resolves an untagged plain scalar as PyYAML does.
func plain(s string) pyjson.Value {
	switch {
	case yaml11Null.MatchString(s):
		return nil
	case yaml11Bool.MatchString(s):
		switch s[0] {
		case 'y', 'Y', 't', 'T':
			return true
		case 'o', 'O':
			return s == "on" || s == "On" || s == "ON"
		}
		return false
	case yaml11Int.MatchString(s):
		if i, ok := yaml11IntValue(s); ok {
			return pyjson.Number{Text: i.String()}
		}
	case yaml11Float.MatchString(s):
		return pyjson.Float(yaml11FloatValue(s))
	}
	return s
}

func yaml11IntValue(s string) (*big.Int, bool) {
	s = strings.ReplaceAll(s, "_", "")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	i := new(big.Int)
	ok := true
	switch {
	case s == "0":
	case strings.HasPrefix(s, "0b"):
		_, ok = i.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		_, ok = i.SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		_, ok = i.SetString(s[1:], 8)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.Atoi(part)
			if err != nil {
				return nil, false
			}
			i.Mul(i, big.NewInt(60))
			i.Add(i, big.NewInt(int64(d)))
		}
	default:
		_, ok = i.SetString(s, 10)
	}
	if neg {
		i.Neg(i)
	}
	return i, ok
}

func yaml11FloatValue(s string) float64 {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1)
	case s == ".nan":
		return math.NaN()
	case strings.Contains(s, ":"):
		f := 0.0
		for _, part := range strings.Split(s, ":") {
			d, _ := strconv.ParseFloat(part, 64)
			f = f*60 + d
		}
		return sign * f
	}
	f, _ := strconv.ParseFloat(s, 64)
	return sign * f
}
